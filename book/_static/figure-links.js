// Every figure image links to its full-resolution PNG (opens in a new tab).
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("figure img, div.cell_output img").forEach(function (img) {
    if (img.closest("a")) { return; }
    var link = document.createElement("a");
    link.href = img.getAttribute("src");
    link.target = "_blank";
    link.rel = "noopener";
    link.title = "Open the figure at full resolution";
    link.className = "sk-figure-link";
    img.parentNode.insertBefore(link, img);
    link.appendChild(img);
  });
});
