// What the import page and the project page share: who the user is (a token kept in this
// browser, or a development sign-in), the client, failures shown as sentences with the raw
// answer behind "Details", and the pieces of an analysis both pages show. Everything that
// comes from a map or the service is written with textContent, never parsed as HTML.
import {
  authHeaders, createClient, developmentToken, isDevelopmentHost, userIdFromToken, describeFailure, describeAssetReason, decideScripts,
} from '../client/index.js';

export { describeAssetReason, decideScripts, describeFailure };

const TOKEN_KEY = 'rbxl-import.token';
// This file lives at <base>/api-rbxl/static/common.js; the client wants <base>.
export const baseUrl = new URL('../../', import.meta.url).href.replace(/\/+$/, '');
/** The import page, from any page of the service. */
export const importPageUrl = new URL('../', import.meta.url).href;

export const $ = (id) => document.getElementById(id);

export function el(tag, options = {}, ...children) {
  const node = document.createElement(tag);
  if (options.className) node.className = options.className;
  if (options.id) node.id = options.id;
  if (options.text !== undefined) node.textContent = String(options.text);
  for (const [name, value] of Object.entries(options.attrs ?? {})) node.setAttribute(name, value);
  for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

export const number = (value) => Number(value ?? 0).toLocaleString('en-US');
export const plural = (n, one, many = `${one}s`) => `${number(n)} ${n === 1 ? one : many}`;
export const isNumber = (value) => typeof value === 'number' && Number.isFinite(value);

export function formatBytes(value) {
  if (!isNumber(value)) return '';
  if (value < 1024) return `${value} B`;
  if (value < 1024 * 1024) return `${(value / 1024).toFixed(1)} KB`;
  if (value < 1024 ** 3) return `${(value / 1024 / 1024).toFixed(1)} MB`;
  return `${(value / 1024 ** 3).toFixed(1)} GB`;
}

// ---------------------------------------------------------------------------------------
// Who the user is

/**
 * The page's session: the service's configuration (auth mode, upload limit), the token
 * kept in this browser, and the account bar (#account) that shows and changes it.
 * `onChange` runs after every sign-in or sign-out.
 */
export async function openSession({ onChange = () => {}, devNote = '' } = {}) {
  buildAccount($('account'), devNote);
  let config = { auth_mode: 'unknown', max_upload_bytes: null, asset_downloads: 'unknown' };
  try {
    config = { ...config, ...(await createClient({ baseUrl }).config()) };
  } catch {
    // An older service or a gateway that does not pass /config: the page still works, without its hints.
  }
  const session = {
    config,
    development: config.auth_mode === 'development',
    token: readToken(),
    client: () => createClient({ baseUrl, token: session.token }),
    /** The user id the service will see, where the page can know it (a development host). */
    userId: () => (isDevelopmentHost(location.hostname) ? userIdFromToken(session.token) : null),
    /** Whether a request can carry a user: in development, a readable id; behind a gateway, any token (or its cookies). */
    signedIn: () => (session.development ? session.userId() !== null : true),
    showSignIn: () => showPanel(true),
    setToken(token) {
      session.token = token.trim();
      saveToken(session.token);
      render();
      onChange(session);
    },
  };

  const panel = $('sign-in');
  const tokenInput = $('token');
  tokenInput.value = session.token;
  tokenInput.addEventListener('input', () => session.setToken(tokenInput.value));
  $('account-change').addEventListener('click', () => showPanel(panel.hidden));
  $('dev-sign-in').addEventListener('submit', (event) => {
    event.preventDefault();
    const id = $('dev-user').value.trim();
    // The service's rule for user ids (src/client/auth.ts USER_ID_PATTERN); the value is trimmed above.
    if (!/^[\x21-\x7e](?:[\x20-\x7e]{0,254}[\x21-\x7e])?$/.test(id)) {
      $('dev-user-hint').textContent = 'Use 1 to 256 letters, digits, punctuation or spaces, in plain ASCII.';
      return;
    }
    $('dev-user-hint').textContent = '';
    tokenInput.value = developmentToken(id);
    session.setToken(tokenInput.value);
    showPanel(false);
  });
  $('sign-out').addEventListener('click', () => {
    tokenInput.value = '';
    session.setToken('');
    showPanel(true);
  });

  function showPanel(open) {
    panel.hidden = !open;
    $('account-change').setAttribute('aria-expanded', String(open));
  }

  function render() {
    const id = session.userId();
    const devHost = isDevelopmentHost(location.hostname);
    $('dev-box').hidden = !session.development;
    $('dev-explain-host').hidden = devHost;
    $('dev-sign-in-button').disabled = !devHost;
    if (!devHost) {
      const here = new URL(location.href);
      here.hostname = '127.0.0.1';
      $('dev-host-link').href = here.href;
      $('dev-host-link').textContent = here.href;
    }
    $('token-box').open = !session.development || (session.token !== '' && id === null);
    $('sign-out').hidden = session.token === '';
    let status;
    let hint = '';
    if (session.development) {
      if (id !== null) status = `Signed in as ${id} (development sign-in: the service trusts this id without checking a token).`;
      else if (session.token) status = 'Not signed in: this token has no user id the development service can read.';
      else status = 'Not signed in.';
      if (session.token && id === null) hint = devHost ? 'The token has no readable `id`: use the development sign-in above.' : '';
      else if (id !== null) hint = `Development host: importing as user ${id}.`;
    } else if (session.token) {
      status = id !== null ? `Using your access token (user ${id}).` : 'Using your access token.';
    } else {
      status = 'No access token: paste the one the platform gave you, unless your gateway signs you in.';
    }
    $('account-status').textContent = status;
    $('account-change').textContent = session.token ? 'Change…' : 'Sign in…';
    $('token-hint').textContent = hint;
    document.body.dataset.signedIn = String(session.signedIn() && (session.development ? true : session.token !== ''));
  }

  render();
  // Nobody to be yet: open the way to become someone.
  showPanel(session.development ? session.userId() === null : session.token === '');
  return session;
}

/** The account bar's elements (the same on every page). */
function buildAccount(box, devNote) {
  const input = (id, type, attrs) => el('input', { id, attrs: { id, name: id, type, autocomplete: 'off', spellcheck: 'false', ...attrs } });
  box.replaceChildren(
    el('p', {},
      el('span', { id: 'account-status', attrs: { 'aria-live': 'polite' } }), ' ',
      el('button', { id: 'account-change', className: 'link', text: 'Sign in…', attrs: { type: 'button', 'aria-controls': 'sign-in', 'aria-expanded': 'false' } })),
    el('div', { id: 'sign-in', className: 'panel', attrs: { hidden: '' } },
      el('div', { id: 'dev-box', attrs: { hidden: '' } },
        el('p', {}, 'This service runs in ', el('strong', { text: 'development mode' }), ' (', el('code', { text: 'AUTH_MODE=development' }),
          `): it takes your user id from the page and checks no token. Pick any id to work as. ${devNote}`),
        el('p', { id: 'dev-explain-host', className: 'hint', attrs: { hidden: '' } },
          'Development sign-in works only when the page is opened on ', el('code', { text: 'localhost' }), ' or ', el('code', { text: '127.0.0.1' }),
          ' (only there does the page send the development header). Open ', el('a', { id: 'dev-host-link', attrs: { href: '#' } }), '.'),
        el('form', { id: 'dev-sign-in', className: 'row' },
          el('label', { text: 'User id', attrs: { for: 'dev-user' } }),
          input('dev-user', 'text', { value: 'developer', autocomplete: 'username' }),
          el('button', { id: 'dev-sign-in-button', text: 'Sign in for development', attrs: { type: 'submit' } })),
        el('p', { id: 'dev-user-hint', className: 'hint', attrs: { 'aria-live': 'polite' } })),
      el('details', { id: 'token-box' },
        el('summary', { text: 'Use an access token' }),
        el('label', { text: 'Access token', attrs: { for: 'token' } }),
        input('token', 'password', { placeholder: 'Paste your token', 'aria-describedby': 'token-hint' })),
      el('p', { id: 'token-hint', className: 'hint', attrs: { 'aria-live': 'polite' } }),
      el('button', { id: 'sign-out', className: 'link', text: 'Sign out', attrs: { type: 'button', hidden: '' } })),
  );
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

// ---------------------------------------------------------------------------------------
// Failures

/** Shows what failed as a sentence and what to do, with the raw answer behind "Details" (#error). */
export function showFailure(error, operation, session) {
  const failure = typeof error === 'string'
    ? { message: error, action: '', details: '', code: null, status: 0 }
    : describeFailure(error, operation);
  const box = $('error');
  box.querySelector('.failure-message').textContent = failure.message;
  box.querySelector('.failure-action').textContent = failure.action;
  const details = box.querySelector('details');
  details.hidden = failure.details === '';
  details.open = false;
  details.querySelector('pre').textContent = failure.details;
  box.dataset.code = failure.code ?? '';
  box.hidden = false;
  if (session && (failure.code === 'unauthorized' || failure.code === 'invalid_user')) session.showSignIn();
  return failure;
}

export function hideFailure() {
  $('error').hidden = true;
}

// ---------------------------------------------------------------------------------------
// An analysis, in words

const ASSET_KINDS = { image: ['image', 'images'], mesh: ['mesh', 'meshes'], audio: ['sound', 'sounds'], animation: ['animation', 'animations'], video: ['video', 'videos'] };

function kindWords(kind, n) {
  const [one, many] = ASSET_KINDS[kind] ?? [kind, `${kind}s`];
  return `${number(n)} ${n === 1 ? one : many}`;
}

/** "What the map holds", as short sentences. */
export function holdsSentences(report) {
  const sentences = [];
  const parts = [];
  if (isNumber(report.parts_total)) {
    const extra = [];
    if (report.meshes_total > 0) extra.push(plural(report.meshes_total, 'mesh', 'meshes'));
    if (report.unions_total > 0) extra.push(plural(report.unions_total, 'union'));
    parts.push(`${plural(report.parts_total, 'part')}${extra.length ? ` (${extra.join(', ')})` : ''}`);
  }
  parts.push(plural(report.scripts_total ?? 0, 'script'));
  if (report.terrain?.present) parts.push('terrain');
  if (isNumber(report.instances_total)) parts.push(`${plural(report.instances_total, 'instance')} in all`);
  sentences.push(`The map holds ${parts.join(', ')}.`);
  if (isNumber(report.assets_total)) {
    const kinds = Object.entries(report.assets ?? {}).filter(([, n]) => n > 0).map(([kind, n]) => kindWords(kind, n));
    sentences.push(report.assets_total === 0
      ? 'It names no assets to download.'
      : `It uses ${plural(report.assets_total, 'asset')} the import downloads${kinds.length ? ` (${kinds.join(', ')})` : ''}.`);
  }
  return sentences;
}

/**
 * "What arrives": the report's `imported` counts and `not_imported` list in plain words,
 * with what Skip would leave out (unless `skipNote` is false: a project already made), or null when the report has neither (a service from
 * before they existed).
 */
export function arrivalElement(report, { skipNote = true } = {}) {
  const imported = report.imported && typeof report.imported === 'object' ? report.imported : null;
  const left = Array.isArray(report.not_imported) ? report.not_imported : null;
  if (!imported && !left) return null;
  const box = el('div', { className: 'arrival' });
  if (imported) {
    const n = (key) => (isNumber(imported[key]) ? imported[key] : 0);
    // One paragraph, so the script decision still fits the first screen.
    const items = [];
    const storage = n('parts_in_storage') > 0 ? ` and ${number(n('parts_in_storage'))} kept in storage (templates the scripts copy into the game)` : '';
    items.push(`${plural(n('parts_in_workspace'), 'part')} in the Workspace${storage}`);
    if (n('scripts') > 0) items.push(n('scripts') === 1 ? 'the script in its place in the tree' : `all ${plural(n('scripts'), 'script')} in their places in the tree`);
    const joints = n('joints') + n('joints_generated');
    if (joints > 0) {
      items.push(`${plural(joints, 'joint')} holding parts together` +
        (n('joints_generated') > 0 ? ` (${number(n('joints_generated'))} of them made from the parts' surfaces, as Roblox did when this old map loaded)` : ''));
    }
    for (const [count, one, many] of [
      [n('constraints'), 'constraint'], [n('body_movers'), 'body mover'], [n('humanoids'), 'humanoid'],
      [n('lights'), 'light'], [n('sky_and_effects'), 'sky or lighting effect', 'sky and lighting effects'],
      [n('sounds'), 'sound'], [n('guis'), 'GUI element'], [n('values'), 'value object'],
      [n('remotes'), 'remote or bindable event', 'remote and bindable events'], [n('images'), 'decal or texture', 'decals and textures'],
      [n('particles'), 'particle effect'],
    ]) if (count > 0) items.push(plural(count, one, many)); // meshes and unions: the sentence above counts them

    if (imported.terrain === true) items.push('the terrain, voxel by voxel');
    box.append(el('p', { className: 'imported', text: `What arrives in the project: all of it, every instance with its properties: ${items.join(', ')}.` }));
    const notes = [];
    const free = n('unanchored_parts') - n('unanchored_parts_joined_to_anchored');
    if (free > 0) notes.push(el('span', { text: `${plural(free, 'loose part')} (unanchored, joined to nothing anchored) will move or fall when the game runs, as in Roblox. ` }));
    const scripts = isNumber(report.scripts_total) ? report.scripts_total : n('scripts');
    if (skipNote && scripts > 0) {
      const inside = n('instances_inside_scripts');
      notes.push(el('span', {
        className: 'skip-note',
        text: `Skip leaves out the ${plural(scripts, 'script')}${inside > 0 ? ` and the ${plural(inside, 'instance')} inside them` : ''}.`,
      }));
    }
    if (notes.length) box.append(el('p', { className: 'hint' }, ...notes));
  }
  if (left && left.length) {
    const list = el('ul', { className: 'not-imported' });
    for (const entry of left) {
      const what = `${entry.class ?? 'instance'}${entry.property ? `.${entry.property}` : ''}`;
      list.append(el('li', { text: `${what} (${number(entry.count)}): ${entry.reason ?? 'not carried'}` }));
    }
    box.append(el('details', {}, el('summary', { text: `What does not arrive (${plural(left.length, 'kind')})` }), list));
  } else if (left) {
    box.append(el('p', { className: 'hint', text: 'Nothing is left out.' }));
  }
  return box;
}

/** The URL of the analysis picture (`report.picture.url`, served to the preview's uploaders), or null when it has none. */
export function pictureUrl(report) {
  const url = report.picture?.url;
  return typeof url === 'string' && /\/previews\/[^/]+\/image\.png$/.test(url) ? url : null;
}

/** Loads the picture with the user's credentials (it is not public) into `img`; false when it cannot. */
export async function loadPicture(session, url, img) {
  try {
    const absolute = new URL(url, `${baseUrl}/`).href;
    const response = await fetch(absolute, { headers: authHeaders(session.token, location.hostname) });
    if (!response.ok) return false;
    img.src = URL.createObjectURL(await response.blob());
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------
// Scripts

/** The three kinds of risk with their per-code counts: the decision at a glance. */
export function riskSummaryElement(decision) {
  const list = el('ul', { className: 'risks', id: 'risk-summary' });
  const groups = [
    ['hang', 'Can freeze the game'],
    ['break', 'May fail outside Roblox'],
    ['style', 'Old style only (runs)'],
  ];
  for (const [group, title] of groups) {
    const counts = decision.groups[group];
    const codes = decision.codes.filter((code) => code.info.group === group);
    const item = el('li', { className: `risk risk-${group}${counts.scripts === 0 ? ' risk-none' : ''}`, attrs: { 'data-group': group } },
      el('strong', { className: 'risk-count', text: number(counts.scripts) }),
      el('span', { className: 'risk-title', text: ` ${title}` }));
    const detail = [];
    if (counts.scripts > 0 && counts.enabled < counts.scripts) detail.push(`${number(counts.scripts - counts.enabled)} already off in the map`);
    if (codes.length) detail.push(`scripts with: ${codes.map((code) => `${code.info.label.toLowerCase()} ${number(code.scripts)}`).join(', ')}`);
    if (detail.length) item.append(el('span', { className: 'risk-codes', text: detail.join(' · ') }));
    list.append(item);
  }
  return list;
}

/** Scripts already off, linked, run contexts: one line. */
export function scriptFactsText(decision) {
  const facts = [`${plural(decision.scriptsTotal, 'script')}`];
  facts.push(`${number(decision.disabledInMap)} already switched off in the map`);
  facts.push(`${number(decision.linked)} linked (code not in the file)`);
  const contexts = Object.entries(decision.runContexts).filter(([, n]) => n > 0).map(([name, n]) => `${name} ${number(n)}`);
  if (contexts.length) facts.push(`run contexts: ${contexts.join(', ')}`);
  return facts.join(' · ');
}

/**
 * The flagged scripts grouped by finding, every group folded; copies of one script are
 * one line with their count. `limit` caps the lines drawn per group (the rest counted).
 */
export function riskListElement(decision, { limit = 100 } = {}) {
  const box = el('div', { className: 'risk-list' });
  for (const group of decision.atRisk) {
    const scripts = group.entries.reduce((total, entry) => total + entry.copies, 0);
    const list = el('ul');
    for (const entry of group.entries.slice(0, limit)) {
      const head = el('div', { className: 'risk-entry' }, el('code', { text: entry.path }), ` (${entry.class})`);
      if (entry.copies > 1) {
        head.append(el('span', { className: 'copies', text: ` × ${number(entry.copies)} copies${entry.disabled ? `, ${number(entry.disabled)} off in the map` : ''}` }));
      } else if (entry.disabled) {
        head.append(el('span', { className: 'copies', text: ' (off in the map)' }));
      }
      const item = el('li', {}, head);
      const lines = el('ul', { className: 'finding-lines' });
      for (const finding of entry.findings.slice(0, 5)) lines.append(el('li', { text: `line ${finding.line}: ${finding.message}` }));
      if (entry.findings.length > 5) lines.append(el('li', { className: 'hint', text: `and ${entry.findings.length - 5} more lines` }));
      item.append(lines);
      if (entry.copyPaths.length) {
        item.append(el('p', { className: 'hint', text: `Copies at ${entry.copyPaths.join(', ')}${entry.copies - 1 > entry.copyPaths.length ? ', …' : ''}` }));
      }
      list.append(item);
    }
    if (group.entries.length > limit) list.append(el('li', { className: 'hint', text: `and ${plural(group.entries.length - limit, 'more script')}` }));
    const section = el('details', { className: `risk-group risk-${group.info.group}`, attrs: { 'data-code': group.code } },
      el('summary', {}, el('strong', { text: group.info.label }), ` — ${plural(scripts, 'script')}${group.entries.length < scripts ? ` (${number(group.entries.length)} distinct)` : ''}`),
      el('p', { className: 'hint', text: group.info.meaning }),
      list);
    box.append(section);
  }
  if (!decision.complete) {
    box.append(el('p', { className: 'hint', text: `The list names the first ${number(decision.atRisk.reduce((n, g) => Math.max(n, g.entries.length), 0))} distinct flagged scripts the analysis kept; the counts above cover all ${number(decision.flagged)}.` }));
  }
  return box;
}

/** Per code: scripts, of those enabled in the map, and findings. */
export function findingTableElement(decision) {
  const body = el('tbody');
  for (const code of decision.codes) {
    body.append(el('tr', { attrs: { 'data-code': code.code } },
      el('td', { text: code.info.label }), el('td', { text: code.code, className: 'code' }),
      el('td', { text: number(code.scripts) }), el('td', { text: number(code.enabled) }), el('td', { text: number(code.findings) })));
  }
  return el('table', { className: 'findings' },
    el('thead', {}, el('tr', {}, ...['Finding', 'Code', 'Scripts', 'Enabled in the map', 'Findings'].map((text) => el('th', { text, attrs: { scope: 'col' } })))),
    body);
}

/** A count table (per class, per kind). */
export function countTableElement(counts, heading) {
  const rows = Object.entries(counts ?? {}).filter(([, n]) => isNumber(n) && n > 0);
  if (!rows.length) return null;
  return el('table', {},
    el('thead', {}, el('tr', {}, el('th', { text: heading, attrs: { scope: 'col' } }), el('th', { text: 'Count', attrs: { scope: 'col' } }))),
    el('tbody', {}, ...rows.map(([key, n]) => el('tr', {}, el('td', { text: key }), el('td', { text: number(n) })))));
}

export const MODE_WORDS = {
  disabled: 'Disabled: imported switched off, readable in the hierarchy',
  enabled: 'Enabled: imported as the map has them (scripts the map switches off stay off)',
  skip: 'Skip: not imported; geometry and assets only',
};
