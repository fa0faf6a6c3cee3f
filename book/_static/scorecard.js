// The scorecard's filters (paper, verdict, scale): rows that do not match are hidden, and the
// count of rows shown is announced. Offline, no library.
document.addEventListener("DOMContentLoaded", function () {
  var box = document.querySelector(".sk-filters");
  if (!box) { return; }
  var rows = Array.prototype.slice.call(document.querySelectorAll(".sk-scorecard-table tbody tr"));
  var selects = Array.prototype.slice.call(box.querySelectorAll("select[data-filter]"));
  var shown = box.querySelector(".sk-shown");
  function apply() {
    var n = 0;
    rows.forEach(function (tr) {
      var keep = selects.every(function (s) {
        return !s.value || tr.getAttribute("data-" + s.getAttribute("data-filter")) === s.value;
      });
      tr.hidden = !keep;
      if (keep) { n += 1; }
    });
    shown.textContent = n + " of " + rows.length + " rows";
  }
  selects.forEach(function (s) { s.addEventListener("change", apply); });
  apply();
});
