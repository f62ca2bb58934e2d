
(function () {
  "use strict";
  var root = document.documentElement;
  var models = Array.prototype.slice.call(document.querySelectorAll("section.model"));
  function each(list, f) { Array.prototype.forEach.call(list, f); }
  each(document.querySelectorAll("[data-js-only]"), function (el) { el.hidden = false; });
  function showModel(id) {
    if (models.length < 2) return;
    var all = id === "all";
    each(models, function (m) { m.hidden = !all && m.id !== id; });
    root.classList.toggle("side-by-side", all);
    each(document.querySelectorAll(".switcher [data-show]"), function (t) {
      t.setAttribute("aria-pressed", String(t.getAttribute("data-show") === id));
    });
  }
  function showCell(model, id) {
    each(model.querySelectorAll("[data-group]"), function (g) {
      g.hidden = id !== null && g.getAttribute("data-group") !== id;
    });
    each(model.querySelectorAll("a[data-cell]"), function (a) {
      var on = a.getAttribute("data-cell") === id;
      a.classList.toggle("selected", on);
      if (on) { a.setAttribute("aria-current", "true"); } else { a.removeAttribute("aria-current"); }
    });
    var bar = model.querySelector("[data-filter]");
    if (bar) { bar.hidden = id === null; }
    return bar;
  }
  function mark(id) {  // the URL's #fragment follows what is shown (some browsers refuse it for file://)
    try { history.replaceState(null, "", "#" + id); } catch (refused) { /* the page works without it */ }
  }
  function follow(id) {
    var el = id ? document.getElementById(id) : null;
    var model = el && el.closest ? el.closest("section.model") : null;
    if (id === "all") { showModel("all"); return; }
    showModel(model ? model.id : (models[0] ? models[0].id : ""));
    if (model && el.hasAttribute("data-group")) { showCell(model, id); }
  }
  document.addEventListener("click", function (event) {
    var el = event.target.closest ? event.target.closest("[data-show], a[data-cell], [data-all-cases]") : null;
    if (!el) return;
    event.preventDefault();
    var model = el.closest("section.model");
    if (el.hasAttribute("data-show")) {
      var id = el.getAttribute("data-show");
      showModel(id);
      mark(id);
      window.scrollTo(0, 0);
    } else if (el.hasAttribute("data-cell")) {
      var cell = el.getAttribute("data-cell");
      var bar = showCell(model, cell);
      mark(cell);
      if (bar && bar.getBoundingClientRect().top > window.innerHeight - 80) { bar.scrollIntoView(); }
    } else {
      showCell(model, null);
      mark(model.id);
    }
  });
  window.addEventListener("hashchange", function () { follow(location.hash.slice(1)); });
  follow(location.hash.slice(1));
})();
