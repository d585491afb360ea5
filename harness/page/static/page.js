// Progressive enhancement only: the page is complete without this script. It reads the
// DOM (never data embedded as code), and never builds HTML from page content.
(function () {
  "use strict";
  var doc = document;

  function claimFilters() {
    var bar = doc.getElementById("filters");
    if (!bar) return;
    bar.hidden = false;
    var claims = Array.prototype.slice.call(doc.querySelectorAll("article.claim"));
    var findings = Array.prototype.slice.call(doc.querySelectorAll("details.finding"));
    var boxes = Array.prototype.slice.call(bar.querySelectorAll("input[name=verdict]"));
    var kind = doc.getElementById("problem");
    var search = doc.getElementById("q");
    var shown = doc.getElementById("shown");
    var texts = null;
    var initiallyOpen = findings.map(function (f) { return f.open; });
    var fold = doc.getElementById("settled");
    var foldOpen = fold ? fold.open : false;

    function apply() {
      var on = {};
      boxes.forEach(function (b) { on[b.value] = b.checked; });
      var want = kind.value;
      var q = search.value.trim().toLowerCase();
      if (q && texts === null) {
        texts = claims.map(function (c) { return c.textContent.toLowerCase(); });
      }
      var active = q !== "" || want !== "" || boxes.some(function (b) { return !b.checked; });
      var count = 0;
      claims.forEach(function (c, i) {
        var checks = (c.getAttribute("data-checks") || "").split(" ").filter(Boolean);
        var ok = on[c.getAttribute("data-verdict")] !== false;
        if (ok && want === "none") ok = checks.length === 0;
        else if (ok && want) ok = checks.indexOf(want) >= 0;
        if (ok && q) ok = texts[i].indexOf(q) >= 0;
        c.classList.toggle("hidden", !ok);
        if (ok) count += 1;
      });
      findings.forEach(function (f, i) {
        var visible = f.querySelector("article.claim:not(.hidden)") !== null;
        f.classList.toggle("hidden", !visible);
        f.open = active ? visible : initiallyOpen[i];
      });
      if (fold) {
        var inFold = fold.querySelector("article.claim:not(.hidden)") !== null;
        fold.classList.toggle("hidden", !inFold);
        fold.open = active ? inFold : foldOpen;
      }
      shown.textContent = String(count);
    }
    // The summary's badges filter: a verdict shows only its claims, a problem kind only
    // the claims that have it.
    Array.prototype.forEach.call(doc.querySelectorAll("button.filter"), function (button) {
      button.addEventListener("click", function () {
        var verdict = button.getAttribute("data-verdict");
        var problem = button.getAttribute("data-problem");
        boxes.forEach(function (b) { b.checked = verdict ? b.value === verdict : true; });
        kind.value = problem || "";
        search.value = "";
        apply();
        var target = doc.getElementById("h-claims");
        if (target && target.scrollIntoView) target.scrollIntoView();
      });
    });
    boxes.forEach(function (b) { b.addEventListener("change", apply); });
    kind.addEventListener("change", apply);
    search.addEventListener("input", apply);
    apply();
  }

  function sortable() {
    var tables = doc.querySelectorAll("table.sortable");
    Array.prototype.forEach.call(tables, function (table) {
      var heads = table.tHead.rows[0].cells;
      var body = table.tBodies[0];
      Array.prototype.forEach.call(heads, function (th, col) {
        var button = doc.createElement("button");
        button.type = "button";
        while (th.firstChild) button.appendChild(th.firstChild);
        th.appendChild(button);
        button.addEventListener("click", function () {
          var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
          Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
          th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
          var rows = Array.prototype.slice.call(body.rows);
          function key(row) {
            var cell = row.cells[col];
            var v = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent;
            return v.trim();
          }
          rows.sort(function (a, b) {
            var x = key(a), y = key(b);
            if (x === "" || y === "") return x === y ? 0 : (x === "" ? 1 : -1);
            var nx = Number(x), ny = Number(y);
            var c = !isNaN(nx) && !isNaN(ny) ? nx - ny : x.localeCompare(y);
            return c * dir;
          });
          rows.forEach(function (r) { body.appendChild(r); });
        });
      });
    });
  }

  claimFilters();
  sortable();
  doc.documentElement.setAttribute("data-ready", "1");
})();
