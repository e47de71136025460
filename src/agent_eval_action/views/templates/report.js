(function () {
  "use strict";
  var FILTERS = ["regressed", "failing", "all"];
  var body = document.body;
  var buttons = Array.prototype.slice.call(document.querySelectorAll(".filters button[data-filter]"));
  var questions = Array.prototype.slice.call(document.querySelectorAll("details.question"));

  function visible(question, filter) {
    if (filter === "regressed") return question.getAttribute("data-regressed") === "1";
    if (filter === "failing") return question.getAttribute("data-failing") === "1";
    return true;
  }

  function apply(filter) {
    if (FILTERS.indexOf(filter) < 0) filter = "all";
    body.setAttribute("data-filter", filter);
    buttons.forEach(function (button) {
      button.setAttribute("aria-pressed", button.getAttribute("data-filter") === filter ? "true" : "false");
    });
    questions.forEach(function (question) {
      question.hidden = !visible(question, filter);
    });
    Array.prototype.forEach.call(document.querySelectorAll(".questions"), function (list) {
      var shown = list.querySelectorAll("details.question:not([hidden])").length;
      var empty = list.querySelector(".empty");
      if (empty) empty.hidden = shown > 0;
    });
  }

  function fromHash() {
    var match = /(?:^#|&)filter=([a-z]+)/.exec(window.location.hash);
    return match ? match[1] : null;
  }

  buttons.forEach(function (button) {
    button.addEventListener("click", function () {
      var filter = button.getAttribute("data-filter");
      apply(filter);
      if (window.history && window.history.replaceState) window.history.replaceState(null, "", "#filter=" + filter);
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll(".filters button[data-action]"), function (button) {
    button.addEventListener("click", function () {
      var open = button.getAttribute("data-action") === "expand";
      questions.forEach(function (question) {
        if (!question.hidden) question.open = open;
      });
    });
  });

  var target = window.location.hash && /^#d\d+-q\d+$/.test(window.location.hash) ? document.getElementById(window.location.hash.slice(1)) : null;
  apply(target ? "all" : fromHash() || body.getAttribute("data-initial"));
  if (target) {
    target.open = true;
    target.scrollIntoView();
  } else {
    // The few questions that got worse are what the reader came for: open them.
    var regressed = questions.filter(function (q) { return q.getAttribute("data-regressed") === "1"; });
    if (regressed.length && regressed.length <= 3) regressed.forEach(function (q) { q.open = true; });
  }
})();
