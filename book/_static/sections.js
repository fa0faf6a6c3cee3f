// A figure page opens with its verdicts, figures and deviations; its reference sections (each
// claim's criterion, interval and controls; the changes made after a run; the settings the run
// used) stay under their headings but fold behind one click. A link to a section opens it.
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
  window.addEventListener("hashchange", function () {
    var target = document.getElementById(window.location.hash.slice(1));
    var details = target && target.querySelector(":scope > details.sk-fold");
    if (details) { details.open = true; }
  });
});
