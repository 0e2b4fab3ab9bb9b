// The pairwise reading screen: a / b say which edit is better, e both acceptable and equal,
// n both unacceptable, Shift+1-5 the confidence, t then a letter ticks a reason, m writes a
// comment, Enter submits, p or Backspace opens the pair before, u undoes. What every
// few-keys screen does besides (lighting, the missing-answer check, time on case) is in
// choice-form.js; the time runs once both edits are shown.
(function () {
  "use strict";
  const root = document.getElementById("reading");
  const form = document.getElementById("answer-form");
  if (!root || !form) return;
  const images = ["img-a", "img-b"].map((id) => document.getElementById(id));
  const { choose, light } = window.MedBanana.choiceForm(form, images);
  const comment = form.querySelector('textarea[name="comment"]');
  const armReasons = window.MedBanana.keys.reasons(form, light);
  if (comment) comment.addEventListener("keydown", (event) => {
    if (event.key === "Escape") { comment.blur(); event.stopPropagation(); }
  });

  window.MedBanana.keys.add("answers", (event) => {
    const digit = /^Digit([1-5])$/.exec(event.code);
    if (digit && event.shiftKey) choose("confidence", digit[1]);
    else if (event.key === "a") choose("call", "a");
    else if (event.key === "b") choose("call", "b");
    else if (event.key === "e") choose("call", "equal");
    else if (event.key === "n") choose("call", "neither");
    else if (event.key === "t" && armReasons) armReasons();
    else if (event.key === "m" && comment) { event.preventDefault(); comment.focus(); }
    else if (event.key === "Enter") form.requestSubmit();
    else if (event.key === "u") document.getElementById("undo-form").requestSubmit();
    else if ((event.key === "p" || event.key === "Backspace") && root.dataset.previous) {
      window.location.assign(root.dataset.previous);
    } else return false;
    return true;
  });
})();
