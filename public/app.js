// The import page: choose a map, watch it upload, read its report, pick how its scripts are
// imported (only when it has any), create the project and go where the service says.
// Everything the map supplies is written with textContent, never parsed as HTML.
import { createClient, isDevelopmentHost, userIdFromToken } from '../client/index.js';

const TOKEN_KEY = 'rbxl-import.token';
// This file lives at <base>/api-rbxl/static/app.js; the client wants <base>.
const baseUrl = new URL('../../', import.meta.url).href.replace(/\/+$/, '');

const $ = (id) => document.getElementById(id);
const tokenInput = $('token');
const fileInput = $('file');
const analyzeForm = $('analyze-form');
const createForm = $('create-form');

let analysis = null; // { preview_hash, report, name } of the current file

tokenInput.value = readToken();
describeToken();
tokenInput.addEventListener('input', () => {
  saveToken(tokenInput.value.trim());
  describeToken();
});

fileInput.addEventListener('change', () => {
  reset();
  setStatus(fileInput.files?.[0] ? `Ready to upload ${fileInput.files[0].name}.` : '');
});

analyzeForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const file = fileInput.files?.[0];
  reset();
  if (!file) return showError('Choose a map file first.');
  busy(true);
  $('upload').hidden = false;
  showProgress(0, file.size);
  setStatus(`Uploading ${file.name}…`);
  try {
    const result = await client().analyze(file, { onProgress: showProgress });
    analysis = { ...result, name: file.name };
    $('upload').hidden = true;
    setStatus('');
    showReport(file.name, result.report ?? {});
    showCreate(file.name, result.report ?? {});
  } catch (error) {
    $('upload').hidden = true;
    setStatus('');
    showError(messageOf(error));
  } finally {
    busy(false);
  }
});

for (const radio of document.querySelectorAll('input[name="scripts_mode"]')) radio.addEventListener('change', syncSkipNote);

createForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  if (!analysis) return;
  hideError();
  busy(true);
  const scriptsMode = $('script-mode').hidden
    ? 'disabled'
    : createForm.querySelector('input[name="scripts_mode"]:checked')?.value ?? 'disabled';
  setStatus('Downloading assets and creating the project…');
  try {
    const created = await client().create(analysis.preview_hash, { title: $('title').value.trim(), scriptsMode });
    setStatus(`Created project ${created.project_id}; opening it…`);
    window.location.assign(created.redirect);
  } catch (error) {
    setStatus('');
    showError(messageOf(error));
    busy(false);
  }
});

function client() {
  return createClient({ baseUrl, token: tokenInput.value.trim() });
}

function reset() {
  analysis = null;
  hideError();
  $('report').hidden = true;
  createForm.hidden = true;
}

function showProgress(sent, total) {
  const percent = total > 0 ? Math.floor((sent / total) * 100) : 100;
  $('upload-progress').value = percent;
  $('upload-status').textContent = sent >= total
    ? 'Uploaded; analysing…'
    : `${percent}% (${formatBytes(sent)} of ${formatBytes(total)})`;
}

function showReport(name, report) {
  $('report-file').textContent = [name, isNumber(report.file_size) ? formatBytes(report.file_size) : null, report.format]
    .filter(Boolean)
    .join(' · ');

  const counts = $('report-counts');
  counts.replaceChildren();
  const facts = [
    ['Instances', report.instances_total, 'count-instances'],
    ['Parts', report.parts_total, 'count-parts'],
    ['Meshes', report.meshes_total, 'count-meshes'],
    ['Unions', report.unions_total, 'count-unions'],
    ['Scripts', report.scripts_total, 'count-scripts'],
    ['Scripts flagged', report.scripts_flagged, 'count-scripts-flagged'],
    ['Assets to download', report.assets_total, 'count-assets'],
  ];
  for (const [label, value, id] of facts) {
    if (!isNumber(value)) continue;
    const term = document.createElement('dt');
    term.textContent = label;
    const detail = document.createElement('dd');
    detail.id = id;
    detail.textContent = value.toLocaleString();
    counts.append(term, detail);
  }

  showImported(report);
  fillTable('scripts-by-class', report.scripts);
  fillTable('assets-by-kind', report.assets);
  fillList('warnings', Array.isArray(report.warnings) ? report.warnings.map(String) : []);
  showScriptsAtRisk(report);
  $('report').hidden = false;
}

/** "1,234 sounds", "1 sound": a count and a noun (plural with an s unless given). */
function counted(n, one, many = `${one}s`) {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
}

/** The report's `imported` and `not_imported`, in plain words. */
function showImported(report) {
  const imported = report.imported && typeof report.imported === 'object' ? report.imported : null;
  const lines = [];
  if (imported) {
    const n = (key) => (isNumber(imported[key]) ? imported[key] : 0);
    lines.push(`${counted(n('instances'), 'instance')}: the whole map, every service, model and folder with its properties.`);
    lines.push(`${counted(n('parts_in_workspace'), 'part')} in the Workspace and ${n('parts_in_storage').toLocaleString()} kept in storage (templates the scripts copy into the game).`);
    if (n('scripts') > 0) lines.push(`${counted(n('scripts'), 'script')}, each in its place in the tree.`);
    const joints = n('joints') + n('joints_generated');
    if (joints > 0) {
      lines.push(`${counted(joints, 'joint')} holding parts together` +
        (n('joints_generated') > 0 ? `, ${n('joints_generated').toLocaleString()} of them made from the parts' surfaces, as Roblox did when this old map loaded.` : '.'));
    }
    const others = [
      [n('constraints'), 'constraint'], [n('body_movers'), 'body mover'], [n('humanoids'), 'humanoid'],
      [n('lights'), 'light'], [n('sky_and_effects'), 'sky or lighting effect', 'sky and lighting effects'],
      [n('sounds'), 'sound'], [n('guis'), 'GUI element'], [n('values'), 'value object'],
      [n('remotes'), 'remote or bindable event', 'remote and bindable events'], [n('images'), 'decal or texture', 'decals and textures'],
      [n('particles'), 'particle effect'], [n('unions'), 'union'], [n('meshes'), 'mesh', 'meshes'],
    ].filter(([count]) => count > 0).map(([count, one, many]) => counted(count, one, many));
    if (others.length) lines.push(`Also: ${others.join(', ')}.`);
    if (imported.terrain === true) lines.push('The terrain, voxel by voxel.');
    const free = n('unanchored_parts') - n('unanchored_parts_joined_to_anchored');
    if (free > 0) lines.push(`${counted(free, 'loose part')} (unanchored and joined to nothing anchored) will move or fall when the game runs, as in Roblox.`);
  }
  fillList('imported', lines);
  const missing = Array.isArray(report.not_imported) ? report.not_imported : [];
  fillList('not-imported', missing.map((entry) =>
    `${entry.class}${entry.property ? `.${entry.property}` : ''} (${isNumber(entry.count) ? entry.count.toLocaleString() : '?'}): ${entry.reason}`));
  const note = $('skip-note');
  const inside = imported && isNumber(imported.instances_inside_scripts) ? imported.instances_inside_scripts : 0;
  note.textContent = `Skip leaves out the ${counted(report.scripts_total, 'script')}` +
    (inside > 0 ? ` and the ${counted(inside, 'instance')} inside them.` : '.');
  syncSkipNote();
}

function syncSkipNote() {
  $('skip-note').hidden = !$('mode-skip').checked;
}

function showScriptsAtRisk(report) {
  const scripts = Array.isArray(report.scripts_at_risk) ? report.scripts_at_risk : [];
  const box = $('scripts-at-risk');
  const list = box.querySelector('ul');
  list.replaceChildren();
  for (const script of scripts) {
    const item = document.createElement('li');
    const path = document.createElement('code');
    path.textContent = String(script.path ?? '');
    item.append(path, ` (${String(script.class ?? '')})`);
    const findings = document.createElement('ul');
    for (const finding of Array.isArray(script.findings) ? script.findings : []) {
      const line = document.createElement('li');
      line.textContent = `line ${finding.line}: ${finding.code}: ${finding.message}`;
      findings.append(line);
    }
    item.append(findings);
    list.append(item);
  }
  const flagged = isNumber(report.scripts_flagged) ? report.scripts_flagged : scripts.length;
  $('scripts-at-risk-heading').textContent =
    `${flagged.toLocaleString()} script${flagged === 1 ? '' : 's'} may hang or break` +
    (flagged > scripts.length ? ` (first ${scripts.length} shown)` : '');
  box.hidden = scripts.length === 0;
}

function showCreate(name, report) {
  // The contract: the script-mode choice is offered only when the map has scripts.
  $('script-mode').hidden = !(report.scripts_total > 0);
  $('mode-disabled').checked = true;
  syncSkipNote();
  $('title').value = '';
  $('title').placeholder = name.replace(/\.[^.]+$/, '');
  createForm.hidden = false;
}

function fillTable(id, counts) {
  const box = $(id);
  const body = box.querySelector('tbody');
  body.replaceChildren();
  const rows = counts && typeof counts === 'object' ? Object.entries(counts).filter(([, n]) => isNumber(n) && n > 0) : [];
  for (const [key, value] of rows) {
    const row = document.createElement('tr');
    const name = document.createElement('td');
    name.textContent = key;
    const count = document.createElement('td');
    count.textContent = value.toLocaleString();
    row.append(name, count);
    body.append(row);
  }
  box.hidden = rows.length === 0;
}

function fillList(id, items) {
  const box = $(id);
  const list = box.querySelector('ul');
  list.replaceChildren(...items.map((text) => {
    const item = document.createElement('li');
    item.textContent = text;
    return item;
  }));
  box.hidden = items.length === 0;
}

function describeToken() {
  const token = tokenInput.value.trim();
  let hint = '';
  if (isDevelopmentHost(window.location.hostname)) {
    const id = userIdFromToken(token);
    if (id !== null) hint = `Development host: importing as user ${id}.`;
    else if (token) hint = 'This token has no readable user id; the service may refuse the upload.';
    else hint = 'Paste a token to import as its user.';
  }
  $('token-hint').textContent = hint;
}

function readToken() {
  try {
    return localStorage.getItem(TOKEN_KEY) ?? '';
  } catch {
    return ''; // storage may be disabled; the field still works for this visit
  }
}

function saveToken(token) {
  try {
    if (token) localStorage.setItem(TOKEN_KEY, token);
    else localStorage.removeItem(TOKEN_KEY);
  } catch {
    // storage disabled: nothing to keep
  }
}

function busy(on) {
  $('analyze').disabled = on;
  $('create').disabled = on;
  fileInput.disabled = on;
}

function setStatus(text) {
  $('status').textContent = text;
}

function showError(message) {
  $('error').textContent = message;
  $('error').hidden = false;
}

function hideError() {
  $('error').textContent = '';
  $('error').hidden = true;
}

function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}

function isNumber(value) {
  return typeof value === 'number' && Number.isFinite(value);
}

function formatBytes(value) {
  if (value < 1024) return `${value} B`;
  if (value < 1024 * 1024) return `${(value / 1024).toFixed(1)} KB`;
  return `${(value / 1024 / 1024).toFixed(1)} MB`;
}
