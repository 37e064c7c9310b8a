// What the fidelity check and the quality gate did to a job (docs/api.md, "Fidelity", "Quality gate"): under the
// translation, a subtle ⚑ marker per flagged sentence, its title naming the flags; a summary for the status line.
// Everything the server sent goes in as text (textContent), never as HTML.
window.transqFidelity = (function () {
  const WORDS = {
    untranslated: "untranslated: text in the source's script was left in",
    span_missing: "span missing: a number, date, URL, code or markup span is not in the translation",
    span_repeated: "span repeated: a protected span comes more often than in the source",
    degenerate: "degenerate: the translation still loops after its retry",
    low_confidence: "low confidence: under the job's min_confidence after a retry with a wider beam",
    withheld: "withheld: the quality gate returned the source untranslated",
  };

  // The job's sentence records in order (result.fidelity: per text, its sentences'), or [].
  function records(job) {
    const perText = (job.result && job.result.fidelity) || [];
    return [].concat(...perText);
  }

  // The markers: one per flagged (or withheld) sentence, with its translation as `sentences` (index ->
  // translation, from the event stream) has it.
  function mark(job, sentences) {
    const box = document.getElementById("flags");
    box.replaceChildren();
    records(job).forEach((record, index) => {
      const flags = record.flags || [];
      if (!flags.length && !record.withheld) return;
      const names = flags.concat(record.withheld ? ["withheld"] : []);
      const item = document.createElement("li");
      item.className = "flagged";
      item.dataset.flags = names.join(" ");
      item.title = names.map((f) => (Object.hasOwn(WORDS, f) ? WORDS[f] : f)).join("\n");
      const marker = document.createElement("span");
      marker.className = "marker";
      marker.textContent = "⚑ " + (index + 1) + " · " + names.join(", ");
      const text = document.createElement("span");
      text.className = "sentence";
      text.textContent = sentences && sentences.has(index) ? sentences.get(index) : "";
      item.append(marker, " ", text);
      box.appendChild(item);
    });
    box.hidden = !box.children.length;
  }

  function clear() {
    const box = document.getElementById("flags");
    box.replaceChildren();
    box.hidden = true;
  }

  // For the status line: "", or "; spans 3 kept, 0 repaired; 1 flagged (untranslated 1)" (and what the gate did).
  function summary(job) {
    const f = job.fidelity;
    if (!f) return "";
    const flags = Object.entries(f.flags || {}).map(([name, count]) => name + " " + count).join(", ");
    let text = "; spans " + f.kept + " kept, " + f.repaired + " repaired; " + f.flagged + " flagged" +
      (flags ? " (" + flags + ")" : "");
    const gate = job.quality_gate;
    if (gate) text += "; gate: " + gate.retried + " retried, " + gate.withheld + " withheld";
    return text;
  }

  return { mark, clear, summary };
})();
