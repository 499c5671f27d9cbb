"use strict";
(function () {
  function localTimes(root) {
    var times = root.querySelectorAll("time[datetime]");
    for (var i = 0; i < times.length; i++) {
      var element = times[i];
      if (element.hasAttribute("data-local")) continue;
      var date = new Date(element.getAttribute("datetime"));
      if (isNaN(date.getTime())) continue;
      element.setAttribute("title", element.textContent.trim());
      element.textContent = date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
      element.setAttribute("data-local", "");
    }
  }
  function copyButtons(root) {
    var buttons = root.querySelectorAll("button[data-copy]");
    for (var i = 0; i < buttons.length; i++) {
      var button = buttons[i];
      if (!navigator.clipboard || button.hasAttribute("data-copy-ready")) continue;
      button.setAttribute("data-copy-ready", "");
      button.hidden = false;
      button.addEventListener("click", function (event) {
        var clicked = event.currentTarget;
        var source = document.getElementById(clicked.getAttribute("data-copy"));
        if (!source) return;
        var label = clicked.textContent;
        navigator.clipboard.writeText(source.textContent).then(function () {
          clicked.textContent = "Copied";
          setTimeout(function () {
            clicked.textContent = label;
          }, 2000);
        });
      });
    }
  }
  document.addEventListener("DOMContentLoaded", function () {
    localTimes(document);
    copyButtons(document);
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    localTimes(event.target);
    copyButtons(event.target);
  });
  document.addEventListener("htmx:configRequest", function (event) {
    var meta = document.querySelector('meta[name="csrf-token"]');
    if (meta) event.detail.headers["X-CSRF-Token"] = meta.getAttribute("content");
  });
})();
