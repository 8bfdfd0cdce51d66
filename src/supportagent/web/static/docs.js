// Starts Swagger UI on /docs (a file, so that the page needs no inline script).
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  const root = document.getElementById("swagger-ui");
  if (!root || typeof window.SwaggerUIBundle !== "function") return;
  window.SwaggerUIBundle({
    url: root.dataset.openapiUrl,
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,  // the default validator is another origin
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
