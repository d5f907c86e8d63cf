// toolscore label: keyboard shortcuts and saving labels for the labelling page.
// Case content never passes through this script: the server renders (and escapes) it.
"use strict";

(() => {
  const token = document.body.dataset.token || "";
  const article = document.getElementById("case");
  const note = document.getElementById("note");
  const status = document.getElementById("status");
  const help = document.getElementById("help");
  const LABELS = { c: "correct", i: "incorrect", u: "unsure" };

  // The label the page was rendered with: a different one saved means a reload, which
  // shows the scorers' verdicts (the server leaves them out of an unlabelled case's page).
  const rendered = article ? article.dataset.label : "";
  let savedNote = note ? note.value : "";
  let saving = false;
  let queued = null; // a label asked for while another save was under way
  let leaving = null; // where to go once the save under way is done
  let warned = false; // the labeller was told an unsaved note would be lost

  function show(message, isError) {
    if (!status) return;
    status.textContent = message;
    status.classList.toggle("error", Boolean(isError));
  }

  function noteChanged() {
    return note !== null && note.value !== savedNote;
  }

  async function send(label, text) {
    const response = await fetch("/api/label", {
      method: "POST",
      credentials: "same-origin",
      cache: "no-store",
      headers: { "Content-Type": "application/json", "X-Toolscore-Token": token },
      body: JSON.stringify({ position: Number(article.dataset.position), label, note: text }),
    });
    let data = {};
    try {
      data = await response.json();
    } catch (_) {
      data = {};
    }
    if (!response.ok) {
      throw new Error(data.error || `the server answered ${response.status}`);
    }
    return data;
  }

  function save(label) {
    if (!article || !label) return;
    if (saving) {
      queued = label;
      return;
    }
    saving = true;
    const text = note ? note.value : "";
    show("saving…");
    send(label, text).then(
      (data) => {
        saving = false;
        savedNote = text;
        article.dataset.label = data.label;
        if (queued !== null) {
          const next = queued;
          queued = null;
          save(next);
        } else if (leaving !== null) {
          window.location.assign(leaving);
        } else if (data.label !== rendered) {
          window.location.reload();
        } else {
          show(`Saved: ${data.label}${data.note ? ", with the note" : ""}.`);
        }
      },
      (error) => {
        saving = false;
        queued = null;
        leaving = null;
        const why =
          error instanceof TypeError
            ? "the server cannot be reached (is `toolscore label` still running?)"
            : error.message;
        show(`Not saved: ${why}`, true);
      },
    );
  }

  function go(id) {
    const link = document.getElementById(id);
    if (!link) return;
    const url = link.getAttribute("href");
    if (saving) {
      leaving = url;
    } else if (article && article.dataset.label && noteChanged()) {
      leaving = url;
      save(article.dataset.label);
    } else if (noteChanged() && !warned) {
      warned = true;
      show("Your note is saved with a label: press c, i or u first (or go on to drop it).", true);
    } else {
      warned = true;
      window.location.assign(url);
    }
  }

  function toggleHelp(open) {
    if (help) help.hidden = open === undefined ? !help.hidden : !open;
  }

  function typingIn(target) {
    return (
      target instanceof HTMLTextAreaElement ||
      target instanceof HTMLInputElement ||
      (target instanceof HTMLElement && target.isContentEditable)
    );
  }

  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if (typingIn(target)) {
      if (event.key === "Escape") {
        event.preventDefault();
        target.blur();
      } else if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        if (article && article.dataset.label) save(article.dataset.label);
        else show("A note is saved with a label: leave the note (Esc) and press c, i or u.", true);
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    if (help && !help.hidden && (event.key === "Escape" || event.key === "?")) {
      event.preventDefault();
      toggleHelp(false);
      return;
    }
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    if (key in LABELS && article) {
      event.preventDefault();
      if (!event.repeat) save(LABELS[key]);
    } else if (key === "n" && note) {
      event.preventDefault();
      note.focus();
    } else if (key === "Enter") {
      if (target instanceof HTMLButtonElement || target instanceof HTMLAnchorElement) return;
      event.preventDefault();
      go("next-unlabelled");
    } else if (key === "ArrowRight") {
      event.preventDefault();
      go("next");
    } else if (key === "ArrowLeft") {
      event.preventDefault();
      go("prev");
    } else if (key === "?") {
      event.preventDefault();
      toggleHelp();
    }
  });

  for (const button of document.querySelectorAll("button[data-label]")) {
    button.addEventListener("click", () => save(button.dataset.label));
  }
  const saveNote = document.getElementById("save-note");
  if (saveNote) {
    saveNote.addEventListener("click", () => save(article.dataset.label));
  }
  if (note) {
    note.addEventListener("input", () => {
      warned = false;
      if (saveNote) saveNote.classList.toggle("unsaved", noteChanged());
    });
  }
  const helpButton = document.getElementById("help-button");
  if (helpButton) helpButton.addEventListener("click", () => toggleHelp());
  const helpClose = document.getElementById("help-close");
  if (helpClose) helpClose.addEventListener("click", () => toggleHelp(false));

  // Closing the tab with a note not yet saved asks first; labels themselves are never unsaved.
  window.addEventListener("beforeunload", (event) => {
    if (saving || (noteChanged() && !warned)) {
      event.preventDefault();
      event.returnValue = "";
    }
  });

  document.documentElement.dataset.ready = "true"; // the shortcuts are live
})();
