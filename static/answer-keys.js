// The answer panel of the reading and adjudication screens, by keyboard. Every answer is
// one deliberate key: y (yes), n (no) or e (cannot assess) answers the question the cursor
// is on and moves it to the next; 1-4 put the cursor on a question (they change nothing);
// a / r set the overall verdict, t then a letter ticks a failure reason, h shows the rubric's
// definitions, m goes to the comment, Enter submits. (1-4 once cycled yes, no and cannot
// assess: "no" took two presses and "cannot assess" three, and the reader had to look.) Every key lights up the question it changed, and a submit with an answer
// missing names what is missing and puts the focus on it instead of sending the form.
// A screen passes its own extra keys (confidence, undo, previous case) and a change callback.
window.MedBanana = window.MedBanana || {};
window.MedBanana.answerKeys = function (form, onChange, extraKeys) {
  "use strict";
  const ANSWER_KEYS = { y: "yes", n: "no", e: "cannot_assess" };
  const questions = Array.from(form.querySelectorAll("fieldset.choice[data-key]"));
  let cursor = null;
  const panel = form.closest(".answer-panel") || form;
  const summary = form.querySelector("#missing-summary");

  function flash(el) {
    if (!el) return;
    el.classList.remove("changed");
    void el.offsetWidth; // restart the animation when the same key is pressed twice
    el.classList.add("changed");
  }
  function mark(input) {
    const box = input.closest("fieldset");
    if (box) { box.classList.remove("missing"); box.removeAttribute("aria-invalid"); }
    flash(input.closest("label"));
  }
  function changed(input) { // a key changed it: no change event fires, so tell the screen
    mark(input);
    onChange();
  }
  function choose(name, value) {
    const input = form.querySelector(`input[name="${name}"][value="${value}"]`);
    if (input) { input.checked = true; changed(input); }
  }
  // The question the next y / n / e answers, marked where the eyes are.
  function point(box) {
    if (cursor) cursor.classList.remove("current");
    cursor = box;
    if (cursor) { cursor.classList.add("current"); flash(cursor.querySelector("legend")); }
  }
  function answer(value) {
    if (!cursor) return;
    choose(cursor.dataset.name, value);
    const at = questions.indexOf(cursor);
    // On to the next question still open (in order), else simply the next one.
    const open = questions.slice(at + 1).find((box) => !box.querySelector("input:checked"));
    point(open || questions[at + 1] || cursor);
  }
  questions.forEach((box) => box.addEventListener("change", () => point(box)));
  point(questions.find((box) => !box.querySelector("input:checked")) || questions[0] || null);
  function toggleHelp() {
    panel.classList.toggle("show-help");
  }

  // The questions every answer needs (radio groups), in the order the form shows them.
  function missing() {
    return Array.from(form.querySelectorAll("fieldset.choice")).filter(
      (box) => !box.querySelector("input:checked"));
  }
  form.addEventListener("submit", (event) => {
    const open = missing();
    if (!open.length) return;
    event.preventDefault();
    event.stopImmediatePropagation(); // the screen's own submit handler must not run
    open.forEach((box) => { box.classList.add("missing"); box.setAttribute("aria-invalid", "true"); });
    const names = open.map((box) => box.querySelector("legend").textContent.replace(/^\s*\S+\s+/, "").trim());
    if (summary) {
      summary.textContent = `Not saved: still to answer ${names.join(", ")}.`;
      summary.hidden = false;
    }
    open[0].scrollIntoView({ block: "nearest" });
    open[0].querySelector("input").focus();
  }, true);
  form.addEventListener("change", (event) => {
    if (event.target instanceof HTMLInputElement) mark(event.target);
    if (summary && !missing().length) summary.hidden = true;
  });
  panel.querySelectorAll("[data-toggle-help]").forEach((link) => link.addEventListener("click", (event) => {
    event.preventDefault();
    toggleHelp();
  }));

  const armReasons = window.MedBanana.keys.reasons(form, changed);
  window.MedBanana.keys.add("answers", (event) => {
    if (extraKeys && extraKeys(event, choose)) return true;
    if (!event.shiftKey && /^[1-4]$/.test(event.key)) {
      point(form.querySelector(`fieldset[data-key="${event.key}"]`));
    } else if (ANSWER_KEYS[event.key] && cursor) answer(ANSWER_KEYS[event.key]);
    else if (event.key === "a") choose("overall", "accept");
    else if (event.key === "r") choose("overall", "reject");
    else if (event.key === "t" && armReasons) armReasons();
    else if (event.key === "h") toggleHelp();
    else if (event.key === "m") form.querySelector("textarea").focus();
    else if (event.key === "Enter") form.requestSubmit();
    else return false;
    return true;
  });
  // A form the server sent back with errors: the focus starts on the first one.
  const firstError = form.querySelector("fieldset[aria-invalid] input");
  if (firstError) firstError.focus();
  return choose;
};
