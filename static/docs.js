// The API docs page: Swagger UI from the vendored bundle, started here rather than inline so
// that the page runs under the same script policy as every other.
(function () {
  "use strict";
  const target = document.getElementById("swagger-ui");
  window.SwaggerUIBundle({
    url: target.dataset.openapiUrl,
    dom_id: "#swagger-ui",
    validatorUrl: null, // the default sends the schema to validator.swagger.io
    deepLinking: true,
  });
})();
