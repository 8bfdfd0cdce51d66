// SupportAgent's only script: the monitor's live refresh, the review page's keyboard, and the
// guard that asks before a page with an unsaved edit is left.
// It never builds HTML from data: the live part comes already escaped from the server.
"use strict";

function startMonitor() {
  const live = document.getElementById("live");
  const state = document.getElementById("live-state");
  if (!live) return;
  // The live part keeps the page's filter and paging (they are in the address).
  const url = live.dataset.liveUrl + window.location.search;
  let busy = false;
  async function refresh() {
    if (busy || document.hidden) return;
    busy = true;
    try {
      const response = await fetch(url, { headers: { Accept: "text/html" }, cache: "no-store" });
      if (response.redirected || response.status === 401) {
        window.location.reload();
        return;
      }
      if (response.ok) {
        live.innerHTML = await response.text();
        if (state) state.textContent = "Live: updated " + new Date().toLocaleTimeString() + ".";
      } else if (state) {
        state.textContent = "Live updates paused: the server answered " + response.status + ".";
      }
    } catch (error) {
      if (state) state.textContent = "Live updates paused: the server cannot be reached.";
    } finally {
      busy = false;
    }
  }
  window.setInterval(refresh, 1000);
}

// --- unsaved edits -----------------------------------------------------------------------

function fieldsOf(form) {
  return Array.from(form.querySelectorAll("textarea, input:not([type=hidden])"));
}

function words(text) {
  return text.trim().split(/\s+/).join(" ");
}

function isDirty(form) {
  return fieldsOf(form).some(function (field) {
    const original = field.dataset.original !== undefined ? field.dataset.original : field.defaultValue;
    return words(field.value) !== words(original);
  });
}

function startGuard() {
  const forms = Array.from(document.querySelectorAll("form[data-guard]"));
  if (!forms.length) return;
  let leavingBySubmit = false;
  forms.forEach(function (form) {
    form.addEventListener("submit", function () { leavingBySubmit = true; });
  });
  window.addEventListener("beforeunload", function (event) {
    if (leavingBySubmit || !forms.some(isDirty)) return;
    event.preventDefault();
    event.returnValue = "";  // the browser asks: "Leave site? Changes you made may not be saved."
  });
}

// --- "working as" ------------------------------------------------------------------------

function startActor() {
  const reviewer = document.getElementById("reviewer");
  if (!reviewer) return;
  reviewer.value = window.localStorage.getItem("supportagent.reviewer") || "";
  reviewer.addEventListener("change", function () {
    window.localStorage.setItem("supportagent.reviewer", reviewer.value.trim());
  });
  document.querySelectorAll("form.decision").forEach(function (form) {
    form.addEventListener("submit", function () {
      const field = form.querySelector("input[name=reviewer]");
      if (field) field.value = reviewer.value.trim();
    });
  });
}

// --- the review page ---------------------------------------------------------------------

function startReview() {
  const review = document.getElementById("review");
  if (!review) return;
  const answerForm = document.getElementById("answer-form");
  const answer = document.getElementById("amend-text");
  const approveButton = document.getElementById("approve-button");
  const amendButton = document.getElementById("amend-button");
  const warning = document.getElementById("edit-warning");
  const edited = function () { return words(answer.value) !== words(answer.dataset.original); };

  function approve() {
    // Approving sends the draft as written: with an edit in the box that would drop the edit,
    // so say so instead (the server refuses it too).
    if (edited()) {
      warning.hidden = false;
      answer.focus();
      return;
    }
    answerForm.requestSubmit(approveButton);
  }
  approveButton.addEventListener("click", function (event) {
    if (edited()) {
      event.preventDefault();
      approve();
    }
  });
  document.getElementById("edit-reset").addEventListener("click", function () {
    answer.value = answer.dataset.original;
    warning.hidden = true;
  });
  answer.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      answerForm.requestSubmit(amendButton);
    }
  });
  document.addEventListener("keydown", function (event) {
    const target = event.target;
    const typing = target instanceof HTMLElement &&
      (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
    if (event.key === "Escape" && typing) {
      target.blur();
      return;
    }
    if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
    const go = function (href) { if (href) window.location.assign(href); };
    switch (event.key) {
      case "j": go(review.dataset.next); break;
      case "k": go(review.dataset.prev); break;
      case "a": approve(); break;
      case "e": {
        answer.focus();
        const end = answer.value.length;
        answer.setSelectionRange(end, end);  // type on from the end; nothing is selected
        break;
      }
      case "r": document.getElementById("reject-reason").focus(); break;
      default: return;
    }
    event.preventDefault();
  });
}

document.addEventListener("DOMContentLoaded", function () {
  const page = document.body.dataset.page;
  startActor();
  startGuard();
  if (page === "monitor") startMonitor();
  if (page === "review") startReview();
});
