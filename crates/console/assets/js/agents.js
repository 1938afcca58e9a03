// The agent form's enhancements (the form saves without them): tri-state toggles per
// category and per set with enabled/total counts, a filter over sets and tools, bulk
// toggles that act only on the rows the filter shows, and reading an imported .toml file
// into the import box. Every change ends in a `change` event on the form, which htmx
// turns into a fresh effective-tools panel.
(function () {
  'use strict';

  const form = document.querySelector('[data-agent-form]');
  if (!form) return;
  const readOnly = form.querySelector('fieldset[disabled]') !== null;

  const rowsOf = (card) => Array.from(card.querySelectorAll('[data-tool-row]'));
  const allowOf = (row) => row.querySelector('[data-allow]');
  const shown = (node) => !node.hidden;

  // A set's switch: checked when granted, indeterminate when granted with some tools
  // denied; its count is enabled/total.
  function refreshCard(card) {
    const grant = card.querySelector('[data-grant]');
    const rows = rowsOf(card);
    const on = rows.filter((r) => allowOf(r).checked).length;
    grant.indeterminate = grant.checked && rows.length > 0 && on > 0 && on < rows.length;
    card.classList.toggle('granted', grant.checked);
    const count = card.querySelector('[data-count]');
    if (count) count.textContent = `${grant.checked ? on : 0}/${rows.length}`;
  }

  // A category's toggle: all, none or some (indeterminate) of its sets granted.
  function refreshCategory(section) {
    const grants = Array.from(section.querySelectorAll('[data-grant]'));
    const on = grants.filter((g) => g.checked).length;
    const toggle = section.querySelector('[data-category-toggle]');
    toggle.checked = on === grants.length && on > 0;
    toggle.indeterminate = on > 0 && on < grants.length;
    section.querySelector('[data-category-count]').textContent = `${on}/${grants.length}`;
  }

  function refreshAll() {
    form.querySelectorAll('[data-source]').forEach(refreshCard);
    form.querySelectorAll('[data-category]').forEach(refreshCategory);
  }

  function changed() {
    refreshAll();
    form.dispatchEvent(new Event('change', { bubbles: true }));
  }

  // Granting a set whose tools are all denied allows them all (a grant of nothing is
  // rarely meant); allowing a tool of an ungranted set grants it.
  function setGranted(card, on, rowsToo) {
    const grant = card.querySelector('[data-grant]');
    grant.checked = on;
    const rows = rowsToo || rowsOf(card);
    if (on && !rowsOf(card).some((r) => allowOf(r).checked)) {
      rows.forEach((r) => { allowOf(r).checked = true; });
    }
  }

  form.addEventListener('change', (e) => {
    const t = e.target;
    if (!(t instanceof HTMLInputElement)) return;
    const card = t.closest('[data-source]');
    if (t.matches('[data-grant]')) {
      if (t.checked) setGranted(card, true);
      refreshAll();
    } else if (t.matches('[data-allow]')) {
      if (t.checked) card.querySelector('[data-grant]').checked = true;
      refreshAll();
    } else if (t.matches('[data-category-toggle]')) {
      // Acts on the sets the filter shows only.
      const section = t.closest('[data-category]');
      section.querySelectorAll('[data-source]').forEach((c) => {
        if (shown(c)) setGranted(c, t.checked);
      });
      refreshAll();
    }
  });

  // The filter: a set shows when a word matches it (all its tools then), or when a word
  // matches some of its tools (those only, opened).
  const search = document.querySelector('[data-tool-search]');
  function filter() {
    const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    const hit = (text) => words.every((w) => text.toLowerCase().includes(w));
    form.querySelectorAll('[data-category]').forEach((section) => {
      let any = false;
      section.querySelectorAll('[data-source]').forEach((card) => {
        const whole = words.length === 0 || hit(card.dataset.search);
        let tools = 0;
        rowsOf(card).forEach((row) => {
          row.hidden = !(whole || hit(row.dataset.name));
          if (!row.hidden) tools += 1;
        });
        card.hidden = !(whole || tools > 0);
        const details = card.querySelector('[data-tools]');
        if (details && !whole && tools > 0) details.open = true;
        any = any || !card.hidden;
      });
      section.hidden = !any;
    });
  }

  // Bulk: on the shown rows only. A set shown whole is granted or ungranted; a set shown
  // for some of its tools has those allowed (and is granted) or denied.
  function bulk(on) {
    form.querySelectorAll('[data-source]').forEach((card) => {
      if (!shown(card) || card.closest('[data-category]').hidden) return;
      const rows = rowsOf(card);
      const visible = rows.filter(shown);
      const whole = visible.length === rows.length;
      const grant = card.querySelector('[data-grant]');
      if (on) {
        // A set granted now gets the shown tools only, not the hidden ones too.
        if (!grant.checked && !whole) rows.forEach((r) => { allowOf(r).checked = false; });
        grant.checked = true;
        visible.forEach((r) => { allowOf(r).checked = true; });
      } else if (whole) {
        grant.checked = false;
      } else {
        visible.forEach((r) => { allowOf(r).checked = false; });
      }
    });
    changed();
  }

  if (!readOnly) {
    document.querySelectorAll('[data-js-only], [data-category-toggle]').forEach((n) => { n.hidden = false; });
    search.addEventListener('input', filter);
    // Enter in the filter must not submit the form.
    search.addEventListener('keydown', (e) => { if (e.key === 'Enter') e.preventDefault(); });
    document.querySelectorAll('[data-bulk]').forEach((b) => {
      b.addEventListener('click', () => bulk(b.dataset.bulk === 'on'));
    });
  }
  refreshAll();

  // A complaint beside a field goes once the field is edited (the server checks again).
  form.addEventListener('input', (e) => {
    const t = e.target;
    if (t.getAttribute && t.getAttribute('aria-invalid') === 'true') {
      t.removeAttribute('aria-invalid');
      const error = document.getElementById(`${t.id}-error`);
      if (error) error.hidden = true;
    }
  });

  // Import: a chosen file is read into the box (the server parses it on submit).
  const file = document.querySelector('[data-import-file]');
  if (file) {
    file.addEventListener('change', async () => {
      const f = file.files && file.files[0];
      if (f) document.getElementById('import-toml').value = await f.text();
    });
  }
})();
