// The page's translation memory: a menu of this API key's memories (GET /v1/memories, read again when it is
// opened, so a key typed after the page loaded counts), sent with a request as its `translation_memory`
// (docs/memories.md). A job's exact matches and suggestions are shown with its status.
window.transqMemory = (function () {
  const select = () => document.getElementById("memory");

  async function load() {
    const menu = select();
    if (!menu) return;
    const key = document.getElementById("api-key");
    const headers = key && key.value ? { Authorization: "Bearer " + key.value } : {};
    try {
      const response = await fetch("/v1/memories", { headers });
      if (!response.ok) return;
      const chosen = menu.value;
      const memories = (await response.json()).memories;
      menu.length = 1;  // keep "no memory"
      for (const m of memories) {
        const option = document.createElement("option");
        option.value = m.id;
        option.textContent = (m.name || m.id.slice(0, 8)) + " (" + m.source_lang + " → " + m.target_lang + ", " +
          m.entry_count + ")";
        menu.appendChild(option);
      }
      if ([...menu.options].some((o) => o.value === chosen)) menu.value = chosen;
    } catch (e) { /* keep the menu as it is */ }
  }

  // {translation_memory: id} to add to a request body, {} when none is chosen.
  function fields() {
    const menu = select();
    return menu && menu.value ? { translation_memory: menu.value } : {};
  }

  // What a job got from its memory, for its status line: "", or ", 2 from memory, 1 suggestion(s)".
  function summary(job) {
    if (job.from_memory === undefined) return "";
    const suggested = (job.suggestions || []).length;
    return ", " + job.from_memory + " from memory" + (suggested ? ", " + suggested + " with suggestions" : "");
  }

  document.addEventListener("DOMContentLoaded", () => {
    load();
    const menu = select();
    if (menu) menu.addEventListener("focus", load);
  });
  return { fields, summary };
})();
