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
  // The page's method paragraphs under its title (the noise model, the controls, what a run
  // needs) fold into one click, after the paper and the overview: the page opens with its
  // verdicts and its evidence, and every rule behind them stays one click away.
  var names = {"Noise.": "the noise model", "Controls.": "the controls", "Control.": "the control",
               "Prerequisites.": "the prerequisites (data and time)"};
  var title = document.querySelector("article section > h1");
  var top = title && title.parentElement;
  if (top) {
    var method = [], said = [];
    Array.from(top.children).forEach(function (el) {
      var lead = el.tagName === "P" && el.firstElementChild;
      var key = lead && lead.tagName === "STRONG" && el.firstChild === lead ? lead.textContent.trim() : "";
      if (names[key]) {
        method.push(el);
        said.push(names[key]);
      } else if (method.length && (el.tagName === "OL" || el.tagName === "UL") &&
                 el.previousElementSibling === method[method.length - 1]) {
        method.push(el);  // a list that continues a method paragraph
      }
    });
    if (method.length) {
      var box = document.createElement("details");
      box.className = "sk-fold sk-fold-method";
      var summary = document.createElement("summary");
      var last = said.pop();
      summary.textContent = "Show " + (said.length ? said.join(", ") + " and " + last : last);
      box.appendChild(summary);
      method[0].parentNode.insertBefore(box, method[0]);
      method.forEach(function (el) { box.appendChild(el); });
    }
  }
  window.addEventListener("hashchange", function () {
    var target = document.getElementById(window.location.hash.slice(1));
    var details = target && target.querySelector(":scope > details.sk-fold");
    if (details) { details.open = true; }
  });
});
