// Keys shared by the reading and adjudication screens: 1-4 cycle the dimensions through
// yes -> no -> cannot assess, a / r set the overall verdict, m goes to the comment, Enter
// submits. A screen passes its own extra keys (confidence, undo) and a change callback.
window.MedBanana = window.MedBanana || {};
window.MedBanana.answerKeys = function (form, onChange, extraKeys) {
  "use strict";
  const CYCLE = ["yes", "no", "cannot_assess"];
  function choose(name, value) {
    const input = form.querySelector(`input[name="${name}"][value="${value}"]`);
    if (input) { input.checked = true; onChange(); }
  }
  function cycle(name) {
    const current = form.querySelector(`input[name="${name}"]:checked`);
    const index = current ? CYCLE.indexOf(current.value) : -1;
    choose(name, CYCLE[(index + 1) % CYCLE.length]);
  }
  window.MedBanana.keys.add("answers", (event) => {
    if (extraKeys && extraKeys(event, choose)) return true;
    if (!event.shiftKey && /^[1-4]$/.test(event.key)) {
      cycle(form.querySelector(`fieldset.dimension[data-key="${event.key}"]`).dataset.name);
    } else if (event.key === "a") choose("overall", "accept");
    else if (event.key === "r") choose("overall", "reject");
    else if (event.key === "m") form.querySelector("textarea").focus();
    else if (event.key === "Enter") form.requestSubmit();
    else return false;
    return true;
  });
  return choose;
};
