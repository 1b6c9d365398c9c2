// The project page (where create's `redirect` points when REDIRECT_TEMPLATE is not set): the
// project's title and counts, its assets downloaded and failed grouped by reason with what
// to do about each, its scripts with their mode and findings, a download of the project
// document, and the map in 3D (its scene.glb in three.js: public/viewer.js). The page itself
// is public; what it shows is read with the owner's credentials.
import {
  $, el, importPageUrl, number, plural, isNumber, formatBytes, openSession, showFailure, hideFailure, arrivalElement,
  decideScripts, describeAssetReason, describeFailure, riskSummaryElement, scriptFactsText, riskListElement, findingTableElement,
} from './common.js';

// /api-rbxl/projects/{id}/page
const projectId = decodeURIComponent(location.pathname.split('/').at(-2) ?? '');
let summary = null;
let session = null; // set once the page's modules have loaded (the end of this file)


async function load() {
  hideFailure();
  $('project').hidden = true;
  setStatus('Loading the project…');
  try {
    summary = await session.client().projectSummary(projectId);
  } catch (error) {
    setStatus('');
    const failure = showFailure(error, 'project', session);
    if (failure.code === 'not_found' && session.development) {
      $('error').querySelector('.failure-action').textContent =
        'A project is shown only to the user who created it: sign in with that id (development sign-in above), or import the map again.';
    }
    document.body.dataset.loaded = 'failed';
    return;
  }
  setStatus('');
  render(summary);
  document.body.dataset.loaded = 'true';
}

function render(project) {
  const report = project.report ?? null;
  const title = project.title ?? projectId;
  $('project-title').textContent = title;
  document.title = `${title}: project`;
  const meta = [];
  if (project.created_at) meta.push(`Created ${new Date(project.created_at).toLocaleString()}`);
  if (project.file_name) meta.push(`from ${project.file_name}${isNumber(project.file_size) ? ` (${formatBytes(project.file_size)})` : ''}`);
  if (isNumber(project.document_json_bytes) && isNumber(project.document_bytes)) {
    meta.push(`project document ${formatBytes(project.document_json_bytes)} (${formatBytes(project.document_bytes)} compressed)`);
  } else if (isNumber(project.document_bytes)) meta.push(`project document ${formatBytes(project.document_bytes)}`);
  meta.push(`id ${projectId}`);
  $('project-meta').textContent = meta.join(' · ');

  const counts = $('project-counts');
  counts.replaceChildren();
  const facts = [
    ['Instances', report?.imported?.instances ?? report?.instances_total, 'project-instances'],
    ['Parts', report?.parts_total, 'project-parts'],
    ['Scripts', report?.scripts_total, 'project-scripts'],
    ['Assets downloaded', project.assets_downloaded, 'project-assets-downloaded'],
    ['Assets failed', project.assets_failed, 'project-assets-failed'],
  ];
  for (const [label, value, id] of facts) if (isNumber(value)) counts.append(el('dt', { text: label }), el('dd', { id, text: number(value) }));

  const arrival = report ? arrivalElement(report, { skipNote: false }) : null;
  $('arrival-section').hidden = arrival === null;
  $('arrival').replaceChildren(...(arrival ? [arrival] : []));
  renderAssets(project);
  renderScripts(project, report);
  $('project').hidden = false;
  showScene();
}

// ---------------------------------------------------------------------------------------
// The map in 3D

let sceneShown = null;

/** Fetches the project's scene.glb (built by the service on first request) and opens it in the viewer. */
async function showScene() {
  sceneShown?.dispose();
  sceneShown = null;
  const section = $('scene-view');
  const status = $('scene-status');
  section.hidden = false;
  section.dataset.state = 'loading';
  $('scene-download').hidden = true;
  $('scene-missing').replaceChildren();
  status.textContent = 'Building the 3D view of the map…';
  // Focusable, so the arrow keys move the view (Shift and an arrow turns it) without a mouse.
  const canvas = el('canvas', { id: 'viewer', attrs: { tabindex: '0', 'aria-label': '3D view of the map: drag or Shift and the arrow keys to turn, right-drag or the arrow keys to move, scroll to zoom' } });
  $('scene-slot').replaceChildren(canvas);
  try {
    const bytes = await session.client().download(`/api-rbxl/projects/${encodeURIComponent(projectId)}/scene.glb`);
    status.textContent = `Opening scene.glb (${formatBytes(bytes.byteLength)})…`;
    const viewer = await import('./viewer.js');
    sceneShown = await viewer.showScene(canvas, bytes);
    section.dataset.nodes = String(sceneShown.nodes);
    section.dataset.state = 'shown';
    status.textContent = `${sceneSentence(sceneShown, summary)} Drag to turn, right-drag to move, scroll to zoom; on the view, the arrow keys move it and Shift and an arrow turns it.`;
    $('scene-missing').replaceChildren(...notDrawnElements(sceneShown, summary));
    const link = $('scene-download');
    link.href = URL.createObjectURL(new Blob([bytes], { type: 'model/gltf-binary' }));
    link.download = `${fileStem(summary?.title) || projectId}.glb`;
    link.textContent = `Download scene.glb (${formatBytes(bytes.byteLength)})`;
    link.hidden = false;
  } catch (error) {
    section.dataset.state = 'failed';
    canvas.remove();
    // In words, as every other failure: the client's message carries the raw JSON answer.
    const failure = describeFailure(error, 'scene');
    status.textContent = `The 3D view could not be shown. ${failure.message} ${failure.action}`.trim();
  }
}

/** What the view shows, in words: the Workspace's parts (a map's storage is not drawn). */
function sceneSentence(shown, project) {
  const parts = shown.parts ?? shown.nodes;
  const stored = project?.report?.imported?.parts_in_storage;
  const storage = isNumber(stored) && stored > 0
    ? ` The ${plural(stored, 'part')} kept in storage (templates the scripts copy into the game) ${stored === 1 ? 'is' : 'are'} in the project but not drawn: the view shows the Workspace.`
    : '';
  return `${parts === 0 ? 'No parts in the Workspace.' : `The ${plural(parts, 'part')} in the Workspace.`}${storage}`;
}

/**
 * What the view could not draw, as a list: parts standing as grey boxes (by reason, from
 * scene.glb's `placeholders`), images not downloaded (their decals and textures are left
 * out), and the file's own notes. Empty when everything was drawn.
 */
function notDrawnElements(shown, project) {
  const items = [];
  const boxes = Object.entries(shown.placeholders).filter(([, n]) => isNumber(n) && n > 0);
  const boxed = boxes.reduce((total, [, n]) => total + n, 0);
  if (boxed > 0) {
    const stand = boxed === 1 ? 'stands as a grey box of its size' : 'stand as grey boxes of their size';
    items.push(el('li', { text: `${plural(boxed, 'part')} ${stand} instead of a mesh or union: ${boxes.map(([reason, n]) => `${reason} (${number(n)})`).join(', ')}.` }));
  }
  const images = Array.isArray(project?.assets) ? project.assets.filter((asset) => !asset.ok && asset.kind === 'image').length : 0;
  if (images > 0) {
    items.push(el('li', { text: `${plural(images, 'image')} could not be downloaded (see Assets below): decals and textures showing ${images === 1 ? 'it are' : 'them are'} left out, and parts using ${images === 1 ? 'it' : 'them'} as their texture are drawn in plain colour.` }));
  }
  for (const note of shown.notes.slice(0, 20)) items.push(el('li', { className: 'hint', text: note }));
  if (shown.notes.length > 20) items.push(el('li', { className: 'hint', text: `and ${plural(shown.notes.length - 20, 'more note')}` }));
  if (!items.length) return [];
  return [el('p', { text: 'Not drawn as in Roblox:' }), el('ul', {}, ...items)];
}

// ---------------------------------------------------------------------------------------
// Assets

function renderAssets(project) {
  const assets = Array.isArray(project.assets) ? project.assets : null;
  const box = $('asset-reasons');
  box.replaceChildren();
  if (assets === null) {
    $('assets-summary').textContent = 'This project was created before the service kept its asset outcomes.';
    $('assets-downloaded').hidden = true;
    return;
  }
  const failed = assets.filter((asset) => !asset.ok);
  const downloaded = assets.filter((asset) => asset.ok);
  $('assets-summary').textContent = assets.length === 0
    ? 'The map names no assets.'
    : `${plural(assets.length, 'asset')}: ${number(downloaded.length)} downloaded, ${number(failed.length)} failed.`;

  const byReason = new Map();
  for (const asset of failed) {
    const reason = String(asset.reason ?? 'unknown');
    if (!byReason.has(reason)) byReason.set(reason, []);
    byReason.get(reason).push(asset);
  }
  for (const [reason, list] of [...byReason].sort((a, b) => b[1].length - a[1].length)) {
    const advice = describeAssetReason(reason);
    const ids = el('ul', { className: 'ids' }, ...list.slice(0, 500).map((asset) =>
      el('li', { text: `${asset.kind} ${asset.id}${isNumber(asset.status) ? ` (HTTP ${asset.status})` : ''}` })));
    if (list.length > 500) ids.append(el('li', { text: `and ${number(list.length - 500)} more` }));
    box.append(el('div', { className: 'reason', attrs: { 'data-reason': reason } },
      el('h3', { text: `${advice.label}: ${plural(list.length, 'asset')}` }),
      el('p', { className: 'reason-action', text: `What to do: ${advice.action}` }),
      el('details', {}, el('summary', { text: 'Which assets' }), ids)));
  }

  // Downloaded meshes and union models that did not become glTF: boxes in the 3D view.
  const notConverted = downloaded.filter((asset) => asset.conversion && !asset.conversion.converted);
  const byConversion = new Map();
  for (const asset of notConverted) {
    const reason = String(asset.conversion.reason ?? 'unknown');
    if (!byConversion.has(reason)) byConversion.set(reason, []);
    byConversion.get(reason).push(asset);
  }
  for (const [reason, list] of [...byConversion].sort((a, b) => b[1].length - a[1].length)) {
    const ids = el('ul', { className: 'ids' }, ...list.slice(0, 500).map((asset) =>
      el('li', { text: `${asset.kind} ${asset.id}: ${asset.conversion.message ?? ''}` })));
    if (list.length > 500) ids.append(el('li', { text: `and ${number(list.length - 500)} more` }));
    box.append(el('div', { className: 'reason', attrs: { 'data-conversion': reason } },
      el('h3', { text: `Downloaded but not converted to glTF (${CONVERSION_REASONS[reason] ?? reason}): ${plural(list.length, 'asset')}` }),
      el('p', { className: 'reason-action', text: 'What to do: these stand as boxes of their size in the 3D view and scene.glb; re-export them from Studio (or replace them) and import the map again.' }),
      el('details', {}, el('summary', { text: 'Which assets' }), ids)));
  }

  const list = $('assets-downloaded').querySelector('ul');
  list.replaceChildren(...downloaded.slice(0, 1000).map((asset) =>
    el('li', { text: `${asset.kind} ${asset.id}${isNumber(asset.size) ? `, ${formatBytes(asset.size)}` : ''}${conversionText(asset.conversion)}` })));
  $('assets-downloaded').hidden = downloaded.length === 0;
}

const CONVERSION_REASONS = {
  not_a_mesh: 'not a mesh or union model',
  unknown_version: 'a format version the importer does not know',
  unsupported_feature: 'a feature the importer does not read',
  corrupt: 'damaged or cut short',
  too_large: 'too large to convert',
  no_geometry: 'holds no geometry',
  unreadable: 'could not be read back from the store',
};

function conversionText(conversion) {
  if (!conversion) return '';
  return conversion.converted
    ? ` · glTF: ${conversion.format}, ${plural(conversion.triangles, 'triangle')}`
    : ` · not converted (${CONVERSION_REASONS[conversion.reason] ?? conversion.reason})`;
}

// ---------------------------------------------------------------------------------------
// Scripts

const MODE_SENTENCES = {
  disabled: (d) => `Imported switched off (Disabled): the ${plural(d.scriptsTotal, 'script')} ${d.scriptsTotal === 1 ? 'is' : 'are'} in the project, readable, and the runtime runs none of them until you switch them on.`,
  enabled: (d) => `Imported as the map has them (Enabled): ${number(d.scriptsTotal - d.disabledInMap)} run, ${number(d.disabledInMap)} stay switched off as the map had them.`,
  skip: (d) => `Not imported (Skip): the project holds none of the map's ${plural(d.scriptsTotal, 'script')}.`,
};

function renderScripts(project, report) {
  if (!report) {
    $('scripts-mode').textContent = 'This project was created before the service kept its analysis.';
    return;
  }
  const decision = decideScripts(report);
  const mode = project.scripts_mode ?? 'disabled';
  $('scripts-mode').dataset.mode = mode;
  $('scripts-mode').textContent = decision.scriptsTotal === 0 ? 'The map had no scripts.' : MODE_SENTENCES[mode]?.(decision) ?? `Scripts mode: ${mode}.`;
  const risks = $('scripts-risks');
  risks.replaceChildren();
  if (decision.scriptsTotal > 0) risks.append(el('p', { className: 'hint', text: scriptFactsText(decision) }), riskSummaryElement(decision));
  const listed = decision.atRisk.length > 0;
  $('scripts-list').hidden = !listed;
  if (listed) {
    $('scripts-list-heading').textContent = `Scripts to look at: ${plural(decision.flagged, 'flagged script')}, grouped by finding`;
    $('scripts-list').querySelector('div').replaceChildren(riskListElement(decision));
  }
  $('scripts-findings').hidden = decision.codes.length === 0;
  $('scripts-findings').querySelector('div').replaceChildren(findingTableElement(decision));
}

// ---------------------------------------------------------------------------------------
// Actions

async function download() {
  hideFailure();
  setStatus('Downloading the project document…');
  try {
    const blob = await session.client().projectDocument(projectId);
    const link = el('a', { attrs: { href: URL.createObjectURL(blob), download: `${fileStem(summary?.title) || projectId}.json` } });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
    setStatus(`Downloaded (${formatBytes(blob.size)}).`);
  } catch (error) {
    setStatus('');
    showFailure(error, 'project', session);
  }
}

async function remove() {
  if (!window.confirm(`Delete the project "${summary?.title ?? projectId}"? This cannot be undone.`)) return;
  hideFailure();
  try {
    await session.client().deleteProject(projectId);
    $('project').hidden = true;
    setStatus('The project was deleted.');
  } catch (error) {
    showFailure(error, 'project', session);
  }
}

function fileStem(title) {
  return String(title ?? '').replace(/[^\p{L}\p{N} ._-]+/gu, '').trim().slice(0, 80);
}

function setStatus(text) {
  $('status').textContent = text;
}

// Started last: everything above is defined by now.
session = await openSession({
  devNote: 'A project is shown only to the id that created it.',
  onChange: () => load(),
});
$('import-link').href = importPageUrl;
$('download').addEventListener('click', download);
$('delete').addEventListener('click', remove);
await load();
