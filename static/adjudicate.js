// The adjudication screen: the shared answer keys, and one submit per decision.
(function () {
  "use strict";
  const form = document.getElementById("decision-form");
  if (!form) return;
  let submitted = false;
  form.addEventListener("submit", (event) => {
    if (submitted) { event.preventDefault(); return; }
    submitted = true;
    document.getElementById("submit-decision").disabled = true;
  });
  window.MedBanana.answerKeys(form, () => {});
})();
