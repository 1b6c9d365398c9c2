// The import page: sign in, choose a map (refused here when empty or too large), watch it
// upload, read first what the map holds and what arrives, then decide about its scripts
// (the decision fits the first screen; the details are folded below it), create the project
// with a real progress bar, and go to its page.
import { newCreateId } from '../client/index.js';
import {
  $, el, baseUrl, number, plural, isNumber, formatBytes, openSession, showFailure, hideFailure, holdsSentences, arrivalElement,
  pictureUrl, loadPicture, decideScripts, riskSummaryElement, scriptFactsText, riskListElement, findingTableElement,
  countTableElement,
} from './common.js';

const fileInput = $('file');
const analyzeForm = $('analyze-form');
const createForm = $('create-form');
/** How often a running create's progress is asked for. */
const PROGRESS_POLL_MS = 250;

let analysis = null; // { preview_hash, report, name } of the current file
// While an upload or a create runs, leaving the page (reload, back, closing the tab) ends it:
// the service stops a create whose request closes, so the project would silently not be made.
// The browser asks first.
let running = false;
window.addEventListener('beforeunload', (event) => {
  if (!running) return;
  event.preventDefault();
  event.returnValue = true; // older browsers ask only when this is set
});
const session = await openSession({ onChange: () => hideFailure() });
describeLimit();
document.body.dataset.ready = 'true';

fileInput.addEventListener('change', () => {
  reset();
  const file = fileInput.files?.[0];
  const refusal = file ? refuse(file) : null;
  if (refusal) showFailure(refusal);
  $('analyze').disabled = refusal !== null;
  setStatus(file && !refusal ? `Ready to upload ${file.name} (${formatBytes(file.size)}).` : '');
});

analyzeForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const file = fileInput.files?.[0];
  reset();
  if (!file) return showFailure('Choose a map file first.');
  const refusal = refuse(file);
  if (refusal) return showFailure(refusal);
  if (!session.signedIn()) {
    session.showSignIn();
    return showFailure('Sign in first: the service needs to know whose map this is. Use the development sign-in above.');
  }
  busy(true);
  running = true;
  $('upload').hidden = false;
  showUploadProgress(0, file.size);
  setStatus(`Uploading ${file.name}…`);
  try {
    const result = await session.client().analyze(file, { onProgress: showUploadProgress });
    analysis = { ...result, name: file.name };
    $('upload').hidden = true;
    showAnalysis(file.name, result.report ?? { scripts_total: 0 });
    // Said in the status line (a live region) as well, so a screen reader announces that the analysis came.
    setStatus(`Analysed ${file.name}. ${holdsSentences(result.report ?? { scripts_total: 0 })[0] ?? ''}`.trim());
  } catch (error) {
    $('upload').hidden = true;
    setStatus('');
    showFailure(error, 'analyze', session);
  } finally {
    running = false;
    busy(false);
  }
  // The button that had focus was disabled while the upload ran, which dropped focus to the
  // page: keyboard and screen reader users go on at the analysis, or back at the button.
  if (analysis) $('map-name').focus({ preventScroll: true });
  else $('analyze').focus();
});

createForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  if (!analysis) return;
  hideFailure();
  busy(true);
  running = true;
  const scriptsMode = $('script-decision').hidden
    ? 'disabled'
    : createForm.querySelector('input[name="scripts_mode"]:checked')?.value ?? 'disabled';
  const createId = newCreateId();
  const progress = watchCreate(createId);
  try {
    const created = await session.client().create(analysis.preview_hash, { title: $('title').value.trim(), scriptsMode, createId });
    progress.finish(created);
    running = false; // the project exists: going to it loses nothing
    setStatus(`Created project ${created.project_id}; opening it…`);
    window.location.assign(new URL(created.redirect, `${baseUrl}/`).href);
  } catch (error) {
    running = false;
    progress.stop();
    setStatus('');
    showFailure(error, 'create', session);
    busy(false);
  }
});

/** Why `file` cannot be uploaded, before any byte is sent; null when it can. */
function refuse(file) {
  if (file.size === 0) return `${file.name} is empty (0 bytes): choose the map file Roblox Studio saved.`;
  const limit = session.config.max_upload_bytes;
  if (isNumber(limit) && file.size > limit) {
    // Just over the limit both round alike ("4.0 MB, larger than the 4.0 MB"): then in bytes.
    const [size, most] = formatBytes(file.size) === formatBytes(limit)
      ? [`${number(file.size)} bytes`, `${number(limit)} bytes`]
      : [formatBytes(file.size), formatBytes(limit)];
    return `${file.name} is ${size}, larger than the ${most} this service accepts: save a smaller copy of the map, or ask the operator to raise the limit.`;
  }
  return null;
}

function describeLimit() {
  const limit = session.config.max_upload_bytes;
  $('file-hint').textContent = isNumber(limit) ? `.rbxl, .rbxlx, .rbxm or .rbxmx, up to ${formatBytes(limit)}` : '.rbxl, .rbxlx, .rbxm or .rbxmx';
}

function reset() {
  analysis = null;
  hideFailure();
  $('report').hidden = true;
  $('create-progress').hidden = true;
}

function showUploadProgress(sent, total) {
  const percent = total > 0 ? Math.floor((sent / total) * 100) : 100;
  $('upload-progress').value = percent;
  $('upload-status').textContent = sent >= total
    ? 'Uploaded; analysing…'
    : `${percent}% (${formatBytes(sent)} of ${formatBytes(total)})`;
}

// ---------------------------------------------------------------------------------------
// The analysis: what the map holds and what arrives, the picture, then the decision

function showAnalysis(name, report) {
  $('map-name').textContent = name;
  $('map-meta').textContent = [isNumber(report.file_size) ? formatBytes(report.file_size) : null, report.format].filter(Boolean).join(' · ');
  $('map-holds').textContent = holdsSentences(report).join(' ');
  const arrives = arrivalElement(report);
  $('map-arrives').replaceChildren(...(arrives ? [arrives] : []));
  const downloads = session.config.asset_downloads;
  $('asset-note').hidden = !(downloads === 'off' && report.assets_total > 0);
  // The map itself arrives whole ("Nothing is left out" above); this is about the files it names.
  $('asset-note').textContent = `This service is not set up to download assets, so the ${report.assets_total === 1 ? 'mesh, image or sound file the map names is' : `${number(report.assets_total)} mesh, image and sound files the map names are`} not copied into the project: it names them by their ids, and is still created. (For the operator: ASSET_API_KEY.)`;
  showPicture(report);
  showDecision(report);
  syncSkipNote();
  showDetails(report);
  $('report').hidden = false;
}

/** The arrival's "Skip leaves out…" line stands out while Skip is chosen. */
function syncSkipNote() {
  $('map-arrives').querySelector('.skip-note')?.classList.toggle('chosen', $('mode-skip').checked);
}
createForm.addEventListener('change', syncSkipNote);

async function showPicture(report) {
  const url = pictureUrl(report);
  $('picture').hidden = true;
  const image = $('picture-image');
  if (isNumber(report.picture?.width) && isNumber(report.picture?.height)) {
    image.width = report.picture.width;
    image.height = report.picture.height;
  }
  if (url && (await loadPicture(session, url, image))) {
    $('picture-link').href = image.src;
    $('picture').hidden = false;
  }
}

function showDecision(report) {
  const decision = decideScripts(report);
  const hasScripts = decision.scriptsTotal > 0;
  // The contract: the script-mode choice is offered only when the map has scripts.
  $('script-decision').hidden = !hasScripts;
  $('no-scripts').hidden = hasScripts;
  $('decision-heading').textContent = hasScripts ? `Scripts: ${plural(decision.scriptsTotal, 'script')} to decide about` : 'Create the project';
  if (hasScripts) {
    $('script-facts').textContent = scriptFactsText(decision);
    $('risk-box').replaceChildren(riskSummaryElement(decision));
    $('recommended-mode').textContent = `Recommended: ${decision.recommended === 'enabled' ? 'Enabled' : 'Disabled'}.`;
    $('recommended-reason').textContent = decision.reason;
    $('recommendation').dataset.mode = decision.recommended;
    $(`mode-${decision.recommended}`).checked = true;
  }
  $('title').value = '';
  $('title').placeholder = analysis.name.replace(/\.[^.]+$/, '');
  $('create').disabled = false;

  const listed = decision.atRisk.length > 0;
  $('scripts-at-risk').hidden = !listed;
  $('scripts-at-risk').open = false;
  if (listed) {
    $('scripts-at-risk-heading').textContent = `Scripts to look at: ${plural(decision.flagged, 'flagged script')}, grouped by finding`;
    $('scripts-at-risk-list').replaceChildren(riskListElement(decision));
  }
  $('findings-box').hidden = decision.codes.length === 0;
  $('findings-table').replaceChildren(findingTableElement(decision));
}

function showDetails(report) {
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
    counts.append(el('dt', { text: label }), el('dd', { id, text: number(value) }));
  }
  fillCounts('scripts-by-class', report.scripts, 'Class');
  fillCounts('assets-by-kind', report.assets, 'Kind');
  const warnings = Array.isArray(report.warnings) ? report.warnings.map(String) : [];
  $('warnings').hidden = warnings.length === 0;
  $('warnings').querySelector('ul').replaceChildren(...warnings.map((text) => el('li', { text })));
}

function fillCounts(id, counts, heading) {
  const box = $(id);
  const table = countTableElement(counts, heading);
  box.querySelector('table')?.remove();
  if (table) box.append(table);
  box.hidden = table === null;
}

// ---------------------------------------------------------------------------------------
// Create: a progress bar fed by the service's progress of this create

function watchCreate(createId) {
  const bar = $('create-bar');
  const status = $('create-status');
  $('create-progress').hidden = false;
  bar.removeAttribute('value'); // indeterminate until the service reports
  status.textContent = 'Starting…';
  let shown = 0;
  let stopped = false;
  let timer = null;

  const show = (value, text) => {
    // Never backwards: polls can answer out of order.
    if (value !== null && value >= shown) {
      shown = value;
      bar.value = value;
    }
    status.textContent = text;
  };
  const poll = async () => {
    if (stopped) return;
    try {
      const progress = await session.client().createProgress(createId);
      if (progress && !stopped) render(progress);
    } catch {
      // A missed poll is not a failed create: the create's own answer decides.
    }
    if (!stopped) timer = setTimeout(poll, PROGRESS_POLL_MS);
  };
  const render = (progress) => {
    const { phase, assets_done: done, assets_total: total, assets_failed: failed } = progress;
    document.body.dataset.createPhase = phase;
    if (phase === 'assets') {
      const fraction = total > 0 ? done / total : 1;
      show(Math.round(fraction * 850), `Downloading assets: ${number(done)} of ${number(total)}${failed ? ` (${number(failed)} failed)` : ''}`);
    } else if (phase === 'converting') {
      show(870, `Assets done (${number(total - failed)} downloaded, ${number(failed)} failed); converting meshes to glTF…`);
    } else if (phase === 'building') {
      show(900, `Assets done (${number(total - failed)} downloaded, ${number(failed)} failed); building the project…`);
    } else if (phase === 'storing') {
      show(970, 'Saving the project…');
    }
  };
  timer = setTimeout(poll, 50);
  return {
    finish(created) {
      stopped = true;
      clearTimeout(timer);
      show(1000, `Done: ${number(created.assets_downloaded)} assets downloaded, ${number(created.assets_failed)} failed.`);
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      $('create-progress').hidden = true;
    },
  };
}

function busy(on) {
  $('analyze').disabled = on;
  $('create').disabled = on;
  fileInput.disabled = on;
}

function setStatus(text) {
  $('status').textContent = text;
}
