/**
 * The console's one script, served as /console/assets/<digest>/console-script.js. The pages work without
 * it (plain forms, POST-redirect-GET); with it:
 * - every <time datetime> shows the viewer's local time, with the UTC time the server rendered kept
 *   in its title (shown on hover);
 * - htmx requests carry the session's CSRF token in X-CSRF-Token (from <meta name="csrf-token">),
 *   for hx-post buttons outside a form.
 * No eval, no inline handlers: the CSP allows only scripts from 'self'.
 */
export const consoleScript = `"use strict";
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
  document.addEventListener("DOMContentLoaded", function () {
    localTimes(document);
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    localTimes(event.target);
  });
  document.addEventListener("htmx:configRequest", function (event) {
    var meta = document.querySelector('meta[name="csrf-token"]');
    if (meta) event.detail.headers["X-CSRF-Token"] = meta.getAttribute("content");
  });
})();
`;
