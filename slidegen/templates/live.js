/* slidegen serve: follow the rebuilds of this page (added by the server, never written into a build).

   "patch": some slides of this page changed and nothing else did; their new HTML (the writer's own,
   cut from the rebuilt page) replaces theirs in place. The slide, the click (fragment) shown and
   the speaker view stay; KaTeX, Mermaid, code steps and components run again on those slides only.
   "reload": the page was rebuilt otherwise (or a patch could not be applied): reload it; reveal.js
   keeps the slide in the URL (hash: true). */
(function () {
  if (window.__slidegenLive || !window.EventSource) return;
  window.__slidegenLive = true;
  var page = decodeURIComponent(location.pathname.split("/").pop()) || "index.html";
  var patched = 0;  // slides patched since load: each one's diagrams get ids of their own
  var pending = Promise.resolve();  // patches apply one after the other, in the order sent

  function apply(data) {
    var slides = document.querySelectorAll(".reveal .slides > section");
    var laidOut = window.Reveal && Reveal.isReady() && !(Reveal.isPrintView && Reveal.isPrintView())
      && !(Reveal.isScrollView && Reveal.isScrollView());  // print and scroll views: reveal.js's own layout
    if (!laidOut || slides.length !== data.total) {
      location.reload();
      return Promise.resolve();
    }
    var at = Reveal.getIndices();
    var touched = data.slides.map(function (item) {
      var section = slides[item[0]];
      section.innerHTML = item[1];
      if (window.katex && typeof typesetMath === "function") typesetMath(section);  // templates/deck.html.j2
      return section;
    });
    return touched.reduce(function (chain, section) {
      return chain.then(function () {
        return typeof drawDiagrams === "function" ? drawDiagrams(section, "slidegen-patch-" + (++patched) + "-") : null;
      });
    }, Promise.resolve()).then(function () {
      touched.forEach(function (section) { Reveal.syncSlide(section); });
      Reveal.sync();  // past slides show every fragment, future ones none
      Reveal.slide(at.h, at.v, at.f);  // the click shown on the current slide
      if (typeof showSteps === "function") showSteps();
      // the notes plugin sends the speaker view the current slide's notes on this event
      document.querySelector(".reveal").dispatchEvent(new Event("resumed", { bubbles: true }));
      window.__slidegenPatches = (window.__slidegenPatches || 0) + 1;
    });
  }

  var events = new EventSource("/__events");
  events.addEventListener("patch", function (event) {
    var data;
    try { data = JSON.parse(event.data); } catch (e) { return; }
    if (data.page !== page) return;
    pending = pending.then(function () { return apply(data); }).catch(function () { location.reload(); });
  });
  events.addEventListener("reload", function (event) {
    var data = {};
    try { data = JSON.parse(event.data) || {}; } catch (e) {}
    var pages = data.pages || [], done = data.patched || [];
    if (done.indexOf(page) >= 0) return;  // patched in place just before
    if (!pages.length || pages.indexOf(page) >= 0) location.reload();
  });
})();
