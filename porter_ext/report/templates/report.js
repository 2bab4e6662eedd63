// porter report: sort tables by clicking their headers; filter calls by status; open a
// cell's tables when a link leads to it. The report reads fine without this script.
(function () {
  "use strict";
  function key(cell) {
    if (!cell) return "";
    var v = cell.getAttribute("data-v");
    if (v === null) v = cell.textContent.trim();
    // "12:4" (line:col) and "1e-05 / 1e-08" sort by their leading number.
    var n = /^[-+]?(\d|\.\d)/.test(v) ? parseFloat(v) : NaN;
    return isNaN(n) ? v.toLowerCase() : n;
  }
  function compare(x, y) {
    if (typeof x !== typeof y) { x = String(x); y = String(y); }
    return x < y ? -1 : x > y ? 1 : 0;
  }
  document.querySelectorAll("table.sortable thead th").forEach(function (th) {
    th.tabIndex = 0;
    th.title = "Sort by this column";
    function sort() {
      var table = th.closest("table");
      var body = table.tBodies[0];
      var col = Array.prototype.indexOf.call(th.parentNode.children, th);
      var asc = th.getAttribute("aria-sort") !== "ascending";
      th.parentNode.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        return compare(key(a.cells[col]), key(b.cells[col])) * (asc ? 1 : -1);
      });
      rows.forEach(function (r) { body.appendChild(r); });
    }
    th.addEventListener("click", sort);
    th.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); }
    });
  });
  // a link to a cell (the port plan's) opens that cell's tables
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var cell = id && document.getElementById(id);
    var tables = cell && cell.querySelector(":scope > details.tables");
    if (tables) tables.open = true;
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
  var filter = document.getElementById("status-filter");
  if (filter) {
    filter.closest("p.filter").hidden = false;
    filter.addEventListener("change", function () {
      var want = filter.value;
      if (want !== "all") {  // the rows asked for show: open the cells' folded tables
        document.querySelectorAll(".cell > details.tables").forEach(function (d) { d.open = true; });
      }
      document.querySelectorAll("tr[data-s]").forEach(function (tr) {
        var s = tr.getAttribute("data-s");
        tr.hidden = !(want === "all" || (want === "findings" ? s !== "standard" : s === want));
      });
    });
  }
})();
