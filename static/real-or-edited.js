// The real-or-edited reading screen: r / e answer real or edited, Shift+1-5 the confidence
// (the same key for the same meaning in every design: on the rubric's screen the plain
// digits answer its questions), Enter submits, p or Backspace opens the
// case before, u undoes. What every few-keys screen does besides is in choice-form.js.
(function () {
  "use strict";
  const root = document.getElementById("reading");
  const form = document.getElementById("answer-form");
  if (!root || !form) return;
  const { choose } = window.MedBanana.choiceForm(form, [document.getElementById("shown-image")]);

  window.MedBanana.keys.add("answers", (event) => {
    const digit = /^Digit([1-5])$/.exec(event.code);
    if (digit && event.shiftKey) choose("confidence", digit[1]);
    else if (event.key === "r") choose("call", "real");
    else if (event.key === "e") choose("call", "edited");
    else if (event.key === "Enter") form.requestSubmit();
    else if (event.key === "u") document.getElementById("undo-form").requestSubmit();
    else if ((event.key === "p" || event.key === "Backspace") && root.dataset.previous) {
      window.location.assign(root.dataset.previous);
    } else return false;
    return true;
  });
})();
