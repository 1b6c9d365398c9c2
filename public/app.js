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
    showPicture(result.report ?? {});
    showCreate(file.name, result.report ?? {});
  } catch (error) {
    $('upload').hidden = true;
    setStatus('');
    showError(messageOf(error));
  } finally {
    busy(false);
  }
});

createForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  if (!analysis) return;
  hideError();
  busy(true);
  const scriptsMode = $('script-mode').hidden
    ? 'disabled'
    : createForm.querySelector('input[name="scripts_mode"]:checked')?.value ?? 'disabled';
  setStatus('Downloading assets and creating the project…');
  let created;
  try {
    created = await client().create(analysis.preview_hash, { title: $('title').value.trim(), scriptsMode });
  } catch (error) {
    setStatus('');
    showError(messageOf(error));
    busy(false);
    return;
  }
  setStatus('');
  busy(false);
  createForm.hidden = true;
  await showProject(created);
});

/** The created project: what arrived, then its scene.glb in the 3D view, and the way on to the project. */
async function showProject(created) {
  const section = $('project');
  const downloaded = Number(created.assets_downloaded) || 0, failed = Number(created.assets_failed) || 0;
  const notConverted = Array.isArray(created.assets_not_converted) ? created.assets_not_converted : [];
  $('project-summary').textContent = `Project ${created.project_id}: ${downloaded.toLocaleString()} asset${downloaded === 1 ? '' : 's'} downloaded`
    + (failed ? `, ${failed.toLocaleString()} could not be downloaded` : '')
    + (notConverted.length ? `, ${notConverted.length.toLocaleString()} mesh${notConverted.length === 1 ? '' : 'es'} could not be converted (shown as boxes)` : '') + '.';
  const problems = $('project-problems');
  problems.replaceChildren(...notConverted.slice(0, 20).map((entry) => {
    const item = document.createElement('li');
    item.textContent = `asset ${String(entry.id)}: ${String(entry.reason)} (${String(entry.message ?? '')})`;
    return item;
  }));
  problems.hidden = notConverted.length === 0;
  $('project-open').href = created.redirect;
  section.hidden = false;
  const status = $('viewer-status');
  status.textContent = 'Building the 3D view…';
  try {
    const bytes = await client().download(`/api-rbxl/projects/${encodeURIComponent(created.project_id)}/scene.glb`);
    const download = $('project-download');
    download.href = URL.createObjectURL(new Blob([bytes], { type: 'model/gltf-binary' }));
    download.download = `${created.project_id}.glb`;
    const { showScene } = await import('./viewer.js');
    const shown = await showScene($('viewer'), bytes);
    status.textContent = `${shown.nodes.toLocaleString()} objects. Drag to turn, right-drag to move, scroll to zoom.`;
    window.rbxlViewer = { ready: true, nodes: shown.nodes, meshes: shown.meshes };
  } catch (error) {
    status.textContent = `The 3D view could not be shown: ${messageOf(error)}`;
    window.rbxlViewer = { ready: false, error: messageOf(error) };
  }
}

/** The analysis's picture of the map (fetched with the user's credentials: it is theirs only). */
async function showPicture(report) {
  const figure = $('picture');
  figure.hidden = true;
  const url = report.picture && typeof report.picture.url === 'string' ? report.picture.url : null;
  if (!url) return;
  try {
    const bytes = await client().download(url);
    $('picture-image').src = URL.createObjectURL(new Blob([bytes], { type: 'image/png' }));
    figure.hidden = false;
  } catch {
    // The analysis stands without its picture.
  }
}

function client() {
  return createClient({ baseUrl, token: tokenInput.value.trim() });
}

function reset() {
  analysis = null;
  hideError();
  $('report').hidden = true;
  $('project').hidden = true;
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

  fillTable('scripts-by-class', report.scripts);
  fillTable('assets-by-kind', report.assets);
  fillList('warnings', Array.isArray(report.warnings) ? report.warnings.map(String) : []);
  showScriptsAtRisk(report);
  $('report').hidden = false;
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
