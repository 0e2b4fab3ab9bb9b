// Keyboard navigation, the key help dialog, and placeholders for images that fail to load.
(function () {
  "use strict";

  function follow(id) {
    const link = document.getElementById(id);
    if (link) window.location.assign(link.href);
  }

  function moveRow(step) {
    const rows = Array.from(document.querySelectorAll(".case-row"));
    if (!rows.length) return;
    const current = rows.findIndex((r) => r.classList.contains("current"));
    const next = Math.min(rows.length - 1, Math.max(0, current + step));
    rows.forEach((r) => r.classList.remove("current"));
    rows[next].classList.add("current");
    rows[next].scrollIntoView({ block: "nearest" });
  }

  function toggleHelp() {
    const dialog = document.getElementById("keys-help");
    if (!dialog) return;
    if (dialog.open) dialog.close(); else dialog.showModal();
  }

  window.MedBanana.keys.add("page", (event) => {
    if (event.key === "?") { toggleHelp(); return true; }
    if (document.querySelector(".case-head")) {
      if (event.key === "j" || event.key === "ArrowRight") follow("next-case");
      else if (event.key === "k" || event.key === "ArrowLeft") follow("prev-case");
      else if (event.key === "Backspace") { const back = document.querySelector(".case-nav a"); if (back) window.location.assign(back.href); }
      return false;
    }
    if (event.key === "/") {
      const q = document.getElementById("q");
      if (!q) return false;
      q.focus(); q.select();
      return true;
    }
    if (event.key === "j") moveRow(1);
    else if (event.key === "k") moveRow(-1);
    else if (event.key === "Enter") {
      const row = document.querySelector(".case-row.current .case-link");
      if (row) window.location.assign(row.href);
    }
    return false;
  });

  document.addEventListener("click", (event) => {
    if (event.target instanceof Element && event.target.closest("[data-open-help]")) toggleHelp();
  });

  // A button that acts only on ticked items says so: marked data-needs="<selector of the
  // boxes>" and data-needs-reason, it stays disabled, with the reason as its tooltip, until
  // one of them is ticked. Checked again after every change and every htmx swap.
  function syncNeeds() {
    document.querySelectorAll("button[data-needs]").forEach((button) => {
      const ticked = document.querySelectorAll(`${button.dataset.needs}:checked`).length;
      button.disabled = ticked === 0;
      if (!button.dataset.title) button.dataset.title = button.title || "";
      button.title = ticked === 0 ? button.dataset.needsReason : button.dataset.title;
    });
  }
  document.addEventListener("change", syncNeeds);
  document.addEventListener("DOMContentLoaded", syncNeeds);
  document.addEventListener("htmx:afterSettle", syncNeeds);

  // "Are you sure?" for forms and buttons marked data-confirm (no inline handlers: the
  // content security policy allows no inline script).
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    const asking = (event.submitter && event.submitter.closest("[data-confirm]"))
      || (form.matches("[data-confirm]") ? form : null);
    if (asking && !window.confirm(asking.getAttribute("data-confirm"))) event.preventDefault();
  });

  // A file deleted after import answers 404: show why instead of a broken-image icon.
  document.addEventListener("error", (event) => {
    const img = event.target;
    if (!(img instanceof HTMLImageElement) || !img.hasAttribute("data-fallback")) return;
    const box = document.createElement("div");
    box.className = "placeholder";
    box.setAttribute("role", "img");
    box.setAttribute("aria-label", (img.alt || "image") + ": could not be loaded");
    box.innerHTML = "<span>Image unavailable</span><small>the file could not be read</small>";
    img.replaceWith(box);
  }, true);
})();

// The study's instructions, when they are due (templates/studies/reading/_panel.html): shown
// as a modal in front of the case, so they are read before the first answer.
(function () {
  "use strict";
  const due = document.querySelector("dialog[data-show-now]");
  if (due && typeof due.showModal === "function") due.showModal();
})();

// A refused form is shown at the address it was posted to (/studies?...), so a reload would
// post it again. Replacing the history entry makes a reload a plain GET: of the address the
// form names as its own (data-address), else of this one.
(function () {
  "use strict";
  if (!document.body.hasAttribute("data-answers-post") || !window.history.replaceState) return;
  const form = document.querySelector("form[data-address]");
  const address = form ? form.dataset.address : window.location.pathname + window.location.search;
  window.history.replaceState(null, "", address + window.location.hash);
})();
