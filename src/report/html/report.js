// The HTML report's one script. Everything is already in the page; this only hides what does not
// match the filter and reorders the items. Its SHA-256 is in the page's Content-Security-Policy
// (`SCRIPT_HASH` in html.rs, checked by a test), so any change needs the new hash there.
(function () {
  "use strict";
  var body = document.body;
  var list = document.getElementById("items");
  var controls = document.getElementById("controls");
  if (!list || !controls) {
    return;
  }
  var items = Array.prototype.slice.call(list.children);
  var clusters = Array.prototype.slice.call(document.querySelectorAll("li.cluster"));
  var filter = document.getElementById("filter");
  var sort = document.getElementById("sort");
  var count = document.getElementById("count");
  var orders = ["sim-desc", "sim-asc", "ids"];

  function matches(el, names, f) {
    return names.some(function (name) {
      return (el.getAttribute(name) || "").toLowerCase().indexOf(f) >= 0;
    });
  }

  function show(el, hit) {
    el.hidden = !hit;
    el.classList.toggle("filtered-out", !hit);
  }

  function apply() {
    var f = filter.value.trim().toLowerCase();
    var shown = 0;
    items.forEach(function (el) {
      var hit = !f || matches(el, ["data-a", "data-b"], f);
      show(el, hit);
      shown += hit ? 1 : 0;
    });
    clusters.forEach(function (el) {
      show(el, !f || matches(el, ["data-ids"], f));
    });
    count.textContent = shown + " of " + items.length + " shown";
    body.setAttribute("data-filter", f);
  }

  function similarity(el) {
    var v = parseFloat(el.getAttribute("data-sim"));
    return isNaN(v) ? -1 : v;
  }

  function order() {
    var k = sort.value;
    items.slice().sort(function (x, y) {
      var d = 0;
      if (k === "sim-desc") {
        d = similarity(y) - similarity(x);
      } else if (k === "sim-asc") {
        d = similarity(x) - similarity(y);
      } else if (k === "ids") {
        d = Number(x.getAttribute("data-key")) - Number(y.getAttribute("data-key"));
      }
      return d || Number(x.getAttribute("data-order")) - Number(y.getAttribute("data-order"));
    }).forEach(function (el) {
      list.appendChild(el);
    });
    body.setAttribute("data-sort", k);
  }

  // `#filter=text&sort=sim-asc`: a link (or a test) can open the report already filtered.
  function fromHash() {
    var sorted = false;
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var i = part.indexOf("=");
      if (i < 0) {
        return;
      }
      var value = part.slice(i + 1).replace(/\+/g, " ");
      try {
        value = decodeURIComponent(value);
      } catch (e) {
        return;
      }
      var key = part.slice(0, i);
      if (key === "filter") {
        filter.value = value;
      } else if (key === "sort" && orders.indexOf(value) >= 0) {
        sort.value = value;
        sorted = true;
      }
    });
    if (sorted) {
      order();
    }
    // Nothing is hidden until a filter is set: a long report opens without touching each item.
    if (filter.value || body.hasAttribute("data-filter")) {
      apply();
    } else {
      count.textContent = items.length + " of " + items.length + " shown";
    }
  }

  filter.addEventListener("input", apply);
  sort.addEventListener("change", order);
  window.addEventListener("hashchange", fromHash);
  window.addEventListener("load", function () {
    body.setAttribute("data-load-ms", String(Math.round(performance.now())));
  });
  controls.hidden = false;
  fromHash();
  body.setAttribute("data-script", "ready");
})();
