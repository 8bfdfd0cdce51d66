// SupportAgent's only script: the monitor's live refresh and the review page's keyboard.
// It never builds HTML from data: the live part comes already escaped from the server.
"use strict";

function startMonitor() {
  const live = document.getElementById("live");
  const state = document.getElementById("live-state");
  if (!live) return;
  const url = live.dataset.liveUrl;
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

function startReview() {
  const review = document.getElementById("review");
  const reviewer = document.getElementById("reviewer");
  if (reviewer) {
    reviewer.value = window.localStorage.getItem("supportagent.reviewer") || "";
    reviewer.addEventListener("change", function () {
      window.localStorage.setItem("supportagent.reviewer", reviewer.value.trim());
    });
  }
  document.querySelectorAll("form.decision").forEach(function (form) {
    form.addEventListener("submit", function () {
      const field = form.querySelector("input[name=reviewer]");
      if (field && reviewer) field.value = reviewer.value.trim();
    });
  });
  if (!review) return;
  const amendText = document.getElementById("amend-text");
  if (amendText) {
    amendText.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        document.getElementById("amend-form").requestSubmit();
      }
    });
  }
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
      case "a": document.getElementById("approve-form").requestSubmit(); break;
      case "e": amendText.focus(); amendText.select(); break;
      case "r": document.getElementById("reject-reason").focus(); break;
      default: return;
    }
    event.preventDefault();
  });
}

document.addEventListener("DOMContentLoaded", function () {
  const page = document.body.dataset.page;
  if (page === "monitor") startMonitor();
  if (page === "review") startReview();
});
