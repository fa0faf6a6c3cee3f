// A figure page opens with its verdicts, figures and deviations; its reference sections (each
// claim's criterion, interval and controls; the changes made after a run; the settings the run
// used) stay under their headings but fold behind one click. A link to a section opens it.
// Sections that back a verdict rather than make it (is a stitch trained enough, the spot checks on
// a GPU) keep their prose and figures open and fold each table or log behind its own click.
document.addEventListener("DOMContentLoaded", function () {
  var folds = {
    "claims": "Show each claim's criterion, interval and controls",
    "changes-after-a-run": "Show the changes made after a run",
    "configuration": "Show the settings this run used"
  };
  Object.keys(folds).forEach(function (id) {
    var section = document.getElementById(id);
    if (!section || section.tagName !== "SECTION") { return; }
    var heading = section.querySelector(":scope > h2");
    if (!heading) { return; }
    var details = document.createElement("details");
    details.className = "sk-fold";
    var summary = document.createElement("summary");
    summary.textContent = folds[id];
    details.appendChild(summary);
    while (heading.nextSibling) { details.appendChild(heading.nextSibling); }
    section.appendChild(details);
    if (window.location.hash === "#" + id) { details.open = true; }
  });
  var backing = /trained-enough|convergence-control|training-length-control|spot-check|gpu-diagnosis/;
  document.querySelectorAll("article section[id]").forEach(function (section) {
    if (!backing.test(section.id)) { return; }
    section.querySelectorAll(":scope > div.cell").forEach(function (cell) {
      var out = cell.querySelector(":scope > .cell_output");
      if (!out || cell.querySelector("img") || !out.textContent.trim()) { return; }
      // pandas shows a long table cut, with its full size under it ("70 rows × 7 columns")
      var full = out.textContent.match(/(\d+) rows × \d+ columns/);
      var rows = full ? Number(full[1]) : out.querySelectorAll("tbody tr").length;
      var details = document.createElement("details");
      details.className = "sk-fold sk-fold-output";
      var summary = document.createElement("summary");
      summary.textContent = rows ? "Show the table (" + rows + (rows === 1 ? " row)" : " rows)") : "Show the output";
      details.appendChild(summary);
      out.parentNode.insertBefore(details, out);
      details.appendChild(out);
    });
  });
  window.addEventListener("hashchange", function () {
    var target = document.getElementById(window.location.hash.slice(1));
    var details = target && target.querySelector(":scope > details.sk-fold");
    if (details) { details.open = true; }
  });
});
