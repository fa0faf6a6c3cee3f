// The scorecard as a tool (issue 64, item 3): filters (paper, verdict, why, amended, networks,
// scale), a search box over each row's text, and sorting by a column's header. The state is kept
// in the address (?verdict=...&q=..., or #verdict=... where a file:// page may not rewrite its query),
// so a view can be linked and survives a reload. Rows that do
// not match are hidden, and the count of rows shown is announced. Offline, no library.
document.addEventListener("DOMContentLoaded", function () {
  var box = document.querySelector(".sk-filters");
  if (!box) { return; }
  var tbody = document.querySelector(".sk-scorecard-table tbody");
  var rows = Array.prototype.slice.call(tbody.querySelectorAll("tr"));
  rows.forEach(function (tr, i) { tr.setAttribute("data-order", String(i)); });
  var selects = Array.prototype.slice.call(box.querySelectorAll("select[data-filter]"));
  var search = box.querySelector("input[data-search]");
  var shown = box.querySelector(".sk-shown");
  var sortKey = "", sortDir = 1;
  // The view's state: the query string, or (where the browser refuses to rewrite a file:// address's
  // query, as Chromium may) the fragment, when it holds key=value pairs rather than a section's id.
  function stateOf() {
    var hash = window.location.hash.slice(1);
    return hash.indexOf("=") !== -1 ? hash : window.location.search.slice(1);
  }
  var params = new URLSearchParams(stateOf());
  selects.forEach(function (s) {
    var want = params.get(s.getAttribute("data-filter"));
    if (want && Array.prototype.some.call(s.options, function (o) { return o.value === want; })) { s.value = want; }
  });
  if (search && params.get("q")) { search.value = params.get("q"); }
  if (params.get("sort")) { sortKey = params.get("sort"); sortDir = params.get("dir") === "desc" ? -1 : 1; }
  function remember() {
    var p = new URLSearchParams();
    selects.forEach(function (s) { if (s.value) { p.set(s.getAttribute("data-filter"), s.value); } });
    if (search && search.value.trim()) { p.set("q", search.value.trim()); }
    if (sortKey) { p.set("sort", sortKey); if (sortDir < 0) { p.set("dir", "desc"); } }
    var query = p.toString();
    if (query === new URLSearchParams(stateOf()).toString()) { return; }  // nothing to write (and none at load)
    var hash = window.location.hash.indexOf("=") !== -1 ? "" : window.location.hash;
    try {
      window.history.replaceState(null, "", window.location.pathname + (query ? "?" + query : "") + hash);
    } catch (e) {  // a SecurityError on a file:// page: keep the state in the fragment instead
      window.location.replace("#" + query);
    }
  }
  function cellText(tr, key) {
    var index = { paper: 0, page: 1, verdict: 4 }[key];
    return (tr.children[index] || { textContent: "" }).textContent.trim().toLowerCase();
  }
  function sortRows() {
    var ordered = rows.slice().sort(function (a, b) {
      if (sortKey) {
        var x = cellText(a, sortKey), y = cellText(b, sortKey);
        if (x !== y) { return (x < y ? -1 : 1) * sortDir; }
      }
      return Number(a.getAttribute("data-order")) - Number(b.getAttribute("data-order"));
    });
    ordered.forEach(function (tr) { tbody.appendChild(tr); });
    document.querySelectorAll(".sk-scorecard-table th[data-sort]").forEach(function (th) {
      th.setAttribute("aria-sort", th.getAttribute("data-sort") !== sortKey ? "none" :
        (sortDir > 0 ? "ascending" : "descending"));
    });
  }
  function apply() {
    var q = search ? search.value.trim().toLowerCase() : "";
    var n = 0;
    rows.forEach(function (tr) {
      var keep = selects.every(function (s) {
        return !s.value || tr.getAttribute("data-" + s.getAttribute("data-filter")) === s.value;
      }) && (!q || tr.textContent.toLowerCase().indexOf(q) !== -1);
      tr.hidden = !keep;
      if (keep) { n += 1; }
    });
    shown.textContent = n + " of " + rows.length + " rows";
    remember();
  }
  document.querySelectorAll(".sk-scorecard-table th[data-sort]").forEach(function (th) {
    th.tabIndex = 0;
    th.title = "Sort by " + th.textContent;
    function toggle() {
      var key = th.getAttribute("data-sort");
      sortDir = key === sortKey ? -sortDir : 1;
      sortKey = key;
      sortRows();
      remember();
    }
    th.addEventListener("click", toggle);
    th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(); } });
  });
  selects.forEach(function (s) { s.addEventListener("change", apply); });
  if (search) { search.addEventListener("input", apply); }
  sortRows();
  apply();
});
