// Submit through the job API, follow the job's events (each sentence shown as it arrives, with the API key too:
// events.js reads the stream with fetch), show status, progress, cached sentences and what the fidelity check
// flagged (fidelity.js); cancel and copy; upload a document file and download its translation in the same format.
(function () {
  const $ = (id) => document.getElementById(id);
  const button = $("translate"), cancel = $("cancel"), copy = $("copy");
  const status = $("status"), progress = $("progress");
  let current = null; // the job being followed
  let arrived = new Map(); // the current job's sentences from its events: index -> translation

  function headers(json = true) {
    const h = json ? { "Content-Type": "application/json" } : {};
    const key = $("api-key");
    if (key && key.value) h["Authorization"] = "Bearer " + key.value;
    return h;
  }

  function show(text, isError) {
    status.textContent = text;
    status.className = isError ? "error" : "";
  }

  function resetProgress() {
    progress.value = 0;
    progress.max = 1;
    progress.hidden = true;
  }

  async function call(method, url, body) {
    const form = body instanceof FormData;
    const response = await fetch(url, { method, headers: headers(!form), body: form ? body : body && JSON.stringify(body) });
    let data = null;
    try { data = await response.json(); } catch (e) { /* not JSON */ }
    if (!response.ok && !(data && data.status)) {
      const message = data && data.error ? data.error.message : response.statusText;
      throw new Error(message + " (HTTP " + response.status + ")");
    }
    return data;
  }

  // The pair selector: every served pair, from GET /v1/languages (the default stays if that fails), and
  // for each target a "detect" choice (auto-en): the source language is detected (POST /v1/detect).
  async function loadPairs() {
    try {
      const data = await call("GET", "/v1/languages");
      const select = $("pair"), chosen = select.value;
      select.innerHTML = "";
      for (const p of data.pairs) {
        const option = document.createElement("option");
        option.value = p.source_lang + "-" + p.target_lang;
        option.textContent = p.source_lang + " → " + p.target_lang + (p.workers ? "" : " (no worker yet)");
        select.appendChild(option);
      }
      for (const target of [...new Set(data.pairs.map((p) => p.target_lang))]) {
        const option = document.createElement("option");
        option.value = "auto-" + target;
        option.textContent = "detect language → " + target;
        select.appendChild(option);
      }
      if ([...select.options].some((o) => o.value === chosen)) select.value = chosen;
    } catch (e) { /* keep the default pair */ }
  }
  loadPairs();

  function render(job) {
    const p = job.progress || { sentences_done: 0, sentences_total: 0 };
    progress.hidden = false;
    progress.max = Math.max(1, p.sentences_total);
    progress.value = p.sentences_done;
    show(job.status + " — " + p.sentences_done + "/" + p.sentences_total + " sentences, " +
         job.cached_sentences + " from cache" + window.transqMemory.summary(job) + window.transqFidelity.summary(job), false);
    if (job.detected) {
      const d = job.detected;
      $("detected").textContent = "detected: " + (d.language || "no language") + " (confidence " + d.confidence.toFixed(2) + ")";
    }
    if (job.status === "succeeded") {
      showConfidence(job);
      const translations = job.result.translations;
      $("target").value = translations ? translations.join("") : "(a file: use Download)";
      copy.disabled = !translations;
      window.transqFidelity.mark(job, arrived);
    }
    if (job.status === "failed") show("failed: " + job.error.message + " (" + job.error.code + ")", true);
    if (job.status === "cancelled") show("cancelled", true);
  }

  // Why a job with scores asked for can have none: what the cache answered without one, and what went
  // through a glossary's term protection, carry no score.
  const NO_SCORES = "unknown: these sentences came from the cache without a score (cached before scores were kept) " +
    "or through a glossary";

  // With scores asked for: the job's confidence under the translation, flagged when a sentence's is low.
  function showConfidence(job) {
    const box = $("confidence"), c = job.confidence;
    box.hidden = !c;
    if (!c) return;
    const low = c.low > 0;
    box.className = low ? "low" : "";
    box.textContent = (low ? "⚠ low confidence: " + c.low + " sentence(s) under " + c.threshold + "; " : "confidence: ") +
      (c.min === null ? NO_SCORES : "lowest " + c.min.toFixed(3) + ", mean " + c.mean.toFixed(3));
  }

  // The chosen pair; with a "detect" choice, the served pair from the text's detected language (shown
  // beside the selector with its confidence), or an error naming the language no served pair translates.
  async function chosenPair(text) {
    const [source_lang, target_lang] = $("pair").value.split("-");
    $("detected").textContent = "";
    if (source_lang !== "auto") return { source_lang, target_lang };
    const found = (await call("POST", "/v1/detect", { text })).detections[0];
    const language = found.language || "no language";
    $("detected").textContent = "detected: " + language + " (confidence " + found.confidence.toFixed(2) + ")";
    const pair = found.language + "-" + target_lang;
    if (![...$("pair").options].some((o) => o.value === pair)) {
      throw new Error("detected " + language + ": no served pair translates it to " + target_lang);
    }
    return { source_lang: found.language, target_lang };
  }

  const EMPTY = "Type some text to translate first.";
  // The "type some text" error goes as soon as there is some.
  $("source").addEventListener("input", () => {
    if ($("status").textContent === EMPTY && $("source").value.trim()) show("", false);
  });

  function translate() {
    const text = $("source").value;
    if (!text.trim()) { resetProgress(); show(EMPTY, true); return; }
    let glossary;
    try { glossary = window.transqGlossary.fields(); } catch (error) { show(error.message, true); return; }
    const scores = $("scores").checked;
    const memory = window.transqMemory.fields();
    run(async () => call("POST", "/v1/jobs", { text, ...(await chosenPair(text)), ...glossary, ...memory, ...(scores ? { scores } : {}) }));
  }

  // A document: its text (when it is text) on the left, its translation on the right, and a download
  // link to the translated file (fetched with the API key, so it works with keys on). With a "detect"
  // choice the document stage detects the language of the parsed text (a Word file's too); the glossary
  // (as JSON text) and the scores box go with it as form fields.
  async function translateFile(file) {
    if (window.transqMemory.fields().translation_memory) {
      show("a translation memory applies to typed text, not to files: choose “no memory” to translate a file", true);
      return;
    }
    // A file format (Word, Excel, PowerPoint, OpenDocument, PO, XLIFF, EPUB) is shown by its name: its text
    // is read by the document stage, in its own encoding.
    const name = file.name.toLowerCase();
    const binary = $("file").dataset.files.split(" ").some((extension) => name.endsWith(extension));
    $("source").value = binary ? "(" + file.name + ")" : await file.text();
    let glossary;
    try { glossary = window.transqGlossary.fields(); } catch (error) { show(error.message, true); return; }
    const job = await run(async () => {
      const [source_lang, target_lang] = $("pair").value.split("-");
      const form = new FormData();
      form.append("file", file);
      form.append("source_lang", source_lang);
      form.append("target_lang", target_lang);
      if (glossary.glossary) form.append("glossary", JSON.stringify(glossary.glossary));
      if ($("scores").checked) form.append("scores", "true");
      return call("POST", "/v1/documents", form);
    });
    if (job && job.status === "succeeded") await offerDownload(job);
  }

  async function offerDownload(job) {
    const response = await fetch("/v1/jobs/" + job.id + "/document", { headers: headers(false) });
    if (!response.ok) { show("download failed (HTTP " + response.status + ")", true); return; }
    const disposition = response.headers.get("Content-Disposition") || "";
    const match = disposition.match(/filename\*=UTF-8''(.+)$/);
    const link = $("download");
    link.href = URL.createObjectURL(await response.blob());
    link.download = match ? decodeURIComponent(match[1]) : "translation";
    link.textContent = "Download " + link.download;
    link.hidden = false;
  }

  // The job's events (GET /v1/jobs/<id>/events, sent with the API key): each sentence in its place as it
  // arrives ("…" for those to come), the progress as it changes; resolves with the job's view on `done`. A
  // stream refused or lost for good rejects, and the caller polls instead.
  function follow(job) {
    let total = job.progress.sentences_total;
    return window.transqEvents.follow(job.id, headers(false), {
      sentence(s) {
        arrived.set(s.index, s.translation);
        const shown = [];
        for (let i = 0; i < Math.max(total, arrived.size); i++) shown.push(arrived.has(i) ? arrived.get(i) : "…");
        $("target").value = shown.join(" ");
        $("target").dataset.arrived = String(arrived.size);
      },
      progress(p) {
        total = p.sentences_total;
        if (!["succeeded", "failed", "cancelled"].includes(p.status)) render(Object.assign({}, job, { status: p.status, progress: p }));
      },
    });
  }

  async function poll(job) {
    let delay = 150;
    while (!["succeeded", "failed", "cancelled"].includes(job.status)) {
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 1.5, 1000);
      job = await call("GET", "/v1/jobs/" + job.id);
      render(job);
    }
    return job;
  }

  async function run(submit) {
    button.disabled = true;
    copy.disabled = true;
    $("target").value = "";
    $("download").hidden = true;
    $("confidence").hidden = true;
    $("detected").textContent = "";
    $("target").dataset.arrived = "0";
    arrived = new Map();
    window.transqFidelity.clear();
    resetProgress();
    show("submitting…", false);
    let job = null;
    try {
      job = await submit();
      current = job.id;
      cancel.hidden = false;
      render(job);
      if (!["succeeded", "failed", "cancelled"].includes(job.status)) {
        const submitted = job;
        job = await follow(submitted).catch(() => poll(submitted));
      }
      render(job);
    } catch (error) {
      resetProgress();
      show(error.message, true);
    } finally {
      current = null;
      cancel.hidden = true;
      button.disabled = false;
    }
    return job;
  }

  button.addEventListener("click", translate);
  $("file").addEventListener("change", (event) => {
    const file = event.target.files[0];
    event.target.value = "";  // the same file can be chosen again
    if (file) translateFile(file);
  });
  $("source").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); translate(); }
  });
  cancel.addEventListener("click", async () => {
    if (!current) return;
    try { render(await call("DELETE", "/v1/jobs/" + current)); } catch (error) { show(error.message, true); }
  });
  copy.addEventListener("click", async () => {
    const target = $("target");
    try {
      await navigator.clipboard.writeText(target.value);
    } catch (e) { // no clipboard permission (plain http, some browsers): copy the selection instead
      target.select();
      document.execCommand("copy");
    }
    show("copied", false);
  });
})();
