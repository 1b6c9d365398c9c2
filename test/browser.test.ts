/**
 * The import page and the project page in a real headless Chromium (Debian's package,
 * driven by playwright-core) against the real service on loopback, with a slow asset host
 * on loopback. Screenshots of each state are kept in test-artifacts/screenshots (ignored by
 * git), the 3D view's among them. Without /usr/bin/chromium the tests report themselves skipped.
 */
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page, type Request } from 'playwright-core';
import { PLACES_DIR, REPO_ROOT, TEST_FILES_DIR } from './support/paths.js';
import { startTestService, tokenFor, type TestService } from './support/server.js';
import { authHeaders } from '../src/client/auth.js';
import { startSlowAssetHost, writeBigPlace, type BigPlace } from './support/big-place.js';
import type { AssetServer } from './support/asset-server.js';

const CHROMIUM = '/usr/bin/chromium';
const WITH_SCRIPTS = join(PLACES_DIR, 'rocket-arena-2006.rbxl'); // 15 scripts
const NO_SCRIPTS = join(TEST_FILES_DIR, 'baseplate-413.rbxl');
const NOT_A_PLACE = join(TEST_FILES_DIR, 'README.md');
const SCREENSHOTS = join(REPO_ROOT, 'test-artifacts', 'screenshots');
/** A common laptop screen: the decision must fit it without scrolling. */
const VIEWPORT = { width: 1280, height: 720 };
const MAX_UPLOAD_BYTES = 4 * 1024 * 1024;

describe('import page', () => {
  let service: TestService | undefined;
  let browser: Browser | undefined;
  let assetHost: AssetServer | undefined;
  let bigPlace: BigPlace | undefined;
  let scratch = '';

  before(async () => {
    if (!existsSync(CHROMIUM)) return;
    await mkdir(SCREENSHOTS, { recursive: true });
    scratch = await mkdtemp(join(tmpdir(), 'rbxl-browser-'));
    bigPlace = await writeBigPlace();
    assetHost = await startSlowAssetHost(25);
    service = await startTestService({ assetUrlTemplate: assetHost.templateUrl, assetRetries: 0, maxUploadBytes: MAX_UPLOAD_BYTES });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });

  after(async () => {
    await browser?.close();
    await service?.close();
    await assetHost?.close();
    await bigPlace?.remove();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  interface Session {
    page: Page;
    /** Requests the page made (every one must stay on the service). */
    requests: Request[];
    /** Uncaught errors and console errors in the page. */
    errors: string[];
  }

  /** A fresh page (optionally holding a token already) on `path`; anything not bound for the service is refused and recorded. */
  async function open(t: TestContext, token: string | null, path = '/api-rbxl/', viewport = VIEWPORT): Promise<Session | null> {
    if (!browser || !service) {
      t.skip('chromium not installed');
      return null;
    }
    const context = await browser.newContext({ viewport });
    t.after(() => context.close());
    if (token !== null) await context.addInitScript((value) => localStorage.setItem('rbxl-import.token', value), token);
    const page = await context.newPage();
    const requests: Request[] = [];
    const errors: string[] = [];
    const origin = new URL(service.url).origin;
    await page.route('**/*', (route) =>
      new URL(route.request().url()).origin === origin ? route.continue() : route.abort('blockedbyclient'),
    );
    page.on('request', (request) => requests.push(request));
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      // A refused request is the browser's console error too; the page shows it as a failure.
      if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) errors.push(message.text());
    });
    await page.goto(`${service.url}${path}`);
    await page.waitForSelector('body[data-ready="true"], body[data-loaded]');
    return { page, requests, errors };
  }

  async function analyse(page: Page, file: string): Promise<void> {
    await page.setInputFiles('#file', file);
    await page.click('#analyze');
    await page.waitForSelector('#report:not([hidden]), #error:not([hidden])', { timeout: 120_000 });
  }

  async function shot(page: Page, name: string, fullPage = false): Promise<void> {
    await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage });
  }

  /** Whether the element is drawn and lies wholly inside the first screen (no scrolling). */
  async function inFirstScreen(page: Page, selector: string): Promise<boolean> {
    return page.$eval(selector, (element) => {
      const box = element.getBoundingClientRect();
      return window.scrollY === 0 && box.height > 0 && box.top >= 0 && box.bottom <= window.innerHeight;
    });
  }

  /** The 3D view's canvas holds a drawing: many colours, not one flat fill of its background. */
  /** The view's pixels, small, as text: to tell whether it changed. */
  async function canvasPixels(page: Page): Promise<string> {
    return page.evaluate(() => {
      const canvas = document.getElementById('viewer') as HTMLCanvasElement;
      const copy = document.createElement('canvas');
      copy.width = 64; copy.height = 36;
      const context = copy.getContext('2d')!;
      context.drawImage(canvas, 0, 0, 64, 36);
      return Array.from(context.getImageData(0, 0, 64, 36).data).join(',');
    });
  }

  async function assertCanvasDrawn(page: Page): Promise<void> {
    const seen = await page.evaluate(() => {
      const canvas = document.getElementById('viewer') as HTMLCanvasElement;
      const copy = document.createElement('canvas');
      copy.width = 160; copy.height = 90;
      const context = copy.getContext('2d')!;
      context.drawImage(canvas, 0, 0, 160, 90);
      const data = context.getImageData(0, 0, 160, 90).data;
      const colours = new Set<number>();
      let background = 0;
      for (let i = 0; i < data.length; i += 4) {
        colours.add((data[i]! >> 3) << 10 | (data[i + 1]! >> 3) << 5 | (data[i + 2]! >> 3));
        if (Math.abs(data[i]! - 0xb9) < 6 && Math.abs(data[i + 1]! - 0xd4) < 6 && Math.abs(data[i + 2]! - 0xee) < 6) background++;
      }
      return { colours: colours.size, background: background / (data.length / 4) };
    });
    assert.ok(seen.colours > 20, `the view has ${seen.colours} colours`);
    assert.ok(seen.background < 0.9, `the view is ${Math.round(seen.background * 100)}% background`);
  }

  /** The glTF JSON chunk's node count of the project's scene.glb, fetched as its owner. */
  async function glbNodeCount(projectId: string, token: string): Promise<number> {
    const response = await fetch(`${service!.url}/api-rbxl/projects/${projectId}/scene.glb`, { headers: authHeaders(token, '127.0.0.1') });
    assert.equal(response.status, 200);
    const bytes = new Uint8Array(await response.arrayBuffer());
    const jsonLength = new DataView(bytes.buffer, bytes.byteOffset).getUint32(12, true);
    return (JSON.parse(Buffer.from(bytes.subarray(20, 20 + jsonLength)).toString('utf8')) as { nodes: unknown[] }).nodes.length;
  }

  function assertStayedOnService(session: Session): void {
    const origin = new URL(service!.url).origin;
    const elsewhere = session.requests.map((request) => request.url()).filter((url) => new URL(url).origin !== origin);
    assert.deepEqual(elsewhere, [], 'the pages make no external requests');
    assert.deepEqual(session.errors, []);
  }

  test('development sign-in: the page explains it, builds the development token, and the service sees that user', async (t) => {
    const session = await open(t, null);
    if (!session) return;
    const { page } = session;
    assert.ok(await page.isVisible('#sign-in'), 'nobody signed in: the way to sign in is open');
    assert.match((await page.textContent('#dev-box')) ?? '', /development mode.*AUTH_MODE=development/s);
    assert.match((await page.textContent('#account-status')) ?? '', /Not signed in/);
    await shot(page, '1-sign-in');

    await page.fill('#dev-user', 'dev-ada');
    await page.click('#dev-sign-in-button');
    assert.match((await page.textContent('#account-status')) ?? '', /Signed in as dev-ada/);
    assert.equal(await page.isVisible('#sign-in'), false);
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    assert.match((await page.textContent('#account-status')) ?? '', /Signed in as dev-ada/, 'the sign-in survives a reload');

    await analyse(page, NO_SCRIPTS);
    assert.equal(await page.isVisible('#error'), false, (await page.textContent('#error')) ?? '');
    const analyze = session.requests.find((request) => request.url().endsWith('/api-rbxl/import/rbxl/analyze'));
    assert.ok(analyze);
    assert.equal(analyze.resourceType(), 'xhr', 'uploads go through XMLHttpRequest for progress');
    const headers = await analyze.allHeaders();
    assert.equal(headers['x-auth-override'], 'dev-ada');
    const payload = JSON.parse(Buffer.from(headers['authorization']!.split('.')[1]!, 'base64url').toString('utf8')) as { id: string };
    assert.equal(payload.id, 'dev-ada', 'an unsigned development token carrying the id');
    assertStayedOnService(session);
  });

  test('a civil-war-size place: the decision fits the first screen, the list is folded, create shows progress and lands on the project page', async (t) => {
    const session = await open(t, tokenFor({ id: 'civil-user' }));
    if (!session) return;
    const { page } = session;
    await analyse(page, bigPlace!.path);
    assert.equal(await page.isVisible('#error'), false, (await page.textContent('#error')) ?? '');
    // Keyboard and screen reader users go on at the analysis (the button they pressed was disabled meanwhile).
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'map-name');
    // ...and a screen reader is told that it came: the status line is a live region.
    assert.match((await page.textContent('#status')) ?? '', /^Analysed [^ ]+\.rbxl\. The map holds [\d,]+ parts/);
    assert.equal(await page.getAttribute('#status', 'aria-live'), 'polite');
    await shot(page, '2-analysis-first-screen');
    await shot(page, '2-analysis-whole-page', true);

    // First what the map holds, then the decision, all without scrolling.
    assert.match((await page.textContent('#map-holds')) ?? '', /The map holds [\d,]+ parts.*3,300 scripts/);
    for (const selector of ['#map-holds', '#decision-heading', '#risk-summary', '#recommendation', '#script-mode', '#create']) {
      assert.ok(await inFirstScreen(page, selector), `${selector} is in the first screen`);
    }
    // Hang risks apart from legacy style, with their counts.
    const hang = (await page.textContent('.risk-hang .risk-count')) ?? '';
    assert.equal(hang, '300', 'every copy of the free-model spinner, the ones the map switches off included');
    assert.match((await page.textContent('.risk-hang')) ?? '', /75 already off in the map/);
    assert.match((await page.textContent('#script-facts')) ?? '', /already switched off in the map/);
    assert.match((await page.textContent('#script-facts')) ?? '', /run contexts: Legacy/);
    assert.match((await page.textContent('#recommendation')) ?? '', /Recommended: Disabled\. 225 scripts the map runs have loops/);
    assert.ok(await page.isChecked('#mode-disabled'), 'the recommended mode is preselected');

    // The list: grouped by finding, folded, copies shown once with their count.
    assert.equal(await page.isVisible('#scripts-at-risk'), true);
    assert.equal(await page.$eval('#scripts-at-risk', (element) => (element as HTMLDetailsElement).open), false, 'folded by default');
    assert.equal(await page.isVisible('.risk-group'), false);
    const pageHeight = await page.evaluate(() => document.documentElement.scrollHeight);
    assert.ok(pageHeight < 2 * VIEWPORT.height, `a folded analysis stays short (${pageHeight} px)`);
    await page.click('#scripts-at-risk > summary');
    const loops = page.locator('.risk-group[data-code="loop_without_yield"]');
    assert.equal(await loops.locator('.risk-entry').count(), 1, 'the 300 copies are one entry');
    assert.match((await loops.locator('.risk-entry').textContent()) ?? '', /× 300 copies, 75 off in the map/);
    assert.equal(await page.$eval('.risk-group[data-code="loop_without_yield"]', (element) => (element as HTMLDetailsElement).open), false, 'each group folded too');
    await page.click('#scripts-at-risk > summary');

    // Create: a real progress bar, fed by the service while the slow host answers.
    await page.fill('#title', 'Civil war size');
    // Leaving the page while the create runs would stop it (the service ends a create whose
    // request closes): the browser asks first, then, and only then.
    const asksBeforeLeaving = () => page.evaluate(() => {
      const event = new Event('beforeunload', { cancelable: true });
      window.dispatchEvent(event);
      return event.defaultPrevented;
    });
    assert.equal(await asksBeforeLeaving(), false, 'nothing runs yet: leaving loses nothing');
    let askedMidway = false;
    const seen: string[] = [];
    const watcher = setInterval(() => {
      page.evaluate(() => [document.querySelector('#create-bar')?.getAttribute('value') ?? '', document.querySelector('#create-status')?.textContent ?? ''])
        .then(([value, text]) => seen.push(`${value}|${text}`), () => {});
    }, 60);
    let shotTaken = false;
    const midway = page.waitForFunction(() => /Downloading assets: [1-9]/.test(document.querySelector('#create-status')?.textContent ?? ''), undefined, { timeout: 60_000 })
      .then(async () => { askedMidway = await asksBeforeLeaving(); await shot(page, '3-create-progress'); shotTaken = true; });
    await Promise.all([page.waitForURL('**/api-rbxl/projects/*/page', { timeout: 120_000 }), page.click('#create')]);
    clearInterval(watcher);
    await midway.catch(() => undefined);
    assert.ok(shotTaken, `the page showed assets downloading (${seen.slice(0, 5).join(' ; ')})`);
    assert.ok(askedMidway, 'while the create runs, leaving the page asks first');
    const values = seen.map((entry) => Number(entry.split('|')[0])).filter((value) => value > 0);
    assert.ok(values.length >= 3, `the bar moved (${seen.join(' ; ')})`);
    assert.deepEqual(values, [...values].sort((a, b) => a - b), 'the bar never goes back');
    assert.ok(seen.some((entry) => /Downloading assets: \d+ of 240/.test(entry)));

    // The project page: title, counts, asset reasons with what to do, scripts with their mode.
    await page.waitForSelector('body[data-loaded="true"]');
    await shot(page, '4-project-page', true);
    assert.equal(await page.textContent('#project-title'), 'Civil war size');
    assert.equal(await page.textContent('#project-scripts'), '3,300');
    const downloaded = Number((await page.textContent('#project-assets-downloaded'))?.replace(/,/g, ''));
    const failed = Number((await page.textContent('#project-assets-failed'))?.replace(/,/g, ''));
    assert.equal(downloaded + failed, 240);
    assert.ok(downloaded > 0 && failed > 0, 'the slow host found some and not others');
    const missing = page.locator('.reason[data-reason="not_found"]');
    assert.match((await missing.locator('h3').textContent()) ?? '', new RegExp(`no longer has these assets.*${failed} assets`));
    assert.match((await missing.locator('.reason-action').textContent()) ?? '', /^What to do: Replace them in Studio/);
    assert.equal(await page.getAttribute('#scripts-mode', 'data-mode'), 'disabled');
    assert.match((await page.textContent('#scripts-mode')) ?? '', /Imported switched off \(Disabled\)/);
    assert.equal(await page.$eval('#scripts-list', (element) => (element as HTMLDetailsElement).open), false);

    // The document downloads, with the owner's credentials.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
    const saved = join(scratch, 'document.json');
    await download.saveAs(saved);
    const stored = JSON.parse(await readFile(saved, 'utf8')) as { title: string; scripts_mode: string };
    assert.equal(stored.title, 'Civil war size');
    assert.equal(stored.scripts_mode, 'disabled');
    assertStayedOnService(session);
  });

  test('the project page shows a project to its owner only, with the analysis picture before and the map in 3D after', async (t) => {
    const token = tokenFor({ id: 'page-owner' });
    const owner = await open(t, token);
    if (!owner) return;
    await analyse(owner.page, WITH_SCRIPTS);
    // The analysis's picture beside what the map holds, fetched with the user's credentials.
    await owner.page.waitForSelector('#picture:not([hidden])');
    assert.equal(await owner.page.$eval('#picture-image', (image) => (image as HTMLImageElement).naturalWidth), 1024);
    assert.ok(await inFirstScreen(owner.page, '#picture'), 'the picture is in the first screen');
    await owner.page.locator('#picture').screenshot({ path: join(SCREENSHOTS, 'picture-rocket-arena.png') });
    // What arrives, in words, in the first section, before anything is created: the 2006 map's joints come from its surfaces.
    const arrives = (await owner.page.textContent('#map-arrives')) ?? '';
    assert.match(arrives, /What arrives in the project: all of it, every instance with its properties: [\d,]+ parts in the Workspace.*all 15 scripts in their places/);
    assert.match(arrives, /2,173 joints holding parts together \(2,173 of them made from the parts' surfaces/);
    assert.match(arrives, /Skip leaves out the 15 scripts/);
    assert.equal(await owner.page.locator('#map-arrives .skip-note.chosen').count(), 0, 'Skip is not chosen yet');
    await owner.page.check('#mode-skip');
    assert.equal(await owner.page.locator('#map-arrives .skip-note.chosen').count(), 1, 'the note stands out once Skip is chosen');
    await owner.page.check('#mode-enabled');
    await Promise.all([owner.page.waitForURL('**/api-rbxl/projects/*/page'), owner.page.click('#create')]);
    await owner.page.waitForSelector('body[data-loaded="true"]');
    assert.equal(await owner.page.textContent('#project-title'), 'rocket-arena-2006');
    assert.match((await owner.page.textContent('#scripts-mode')) ?? '', /Imported as the map has them \(Enabled\): 14 run, 1 stay/);
    assert.match((await owner.page.textContent('#assets-summary')) ?? '', /^18 assets: \d+ downloaded, \d+ failed\.$/);
    const pagePath = new URL(owner.page.url()).pathname;

    // The project's scene.glb in the viewer: every node of the file in three.js's scene, drawn.
    await owner.page.waitForSelector('#scene-view[data-state="shown"], #scene-view[data-state="failed"]', { timeout: 120_000 });
    assert.equal(await owner.page.getAttribute('#scene-view', 'data-state'), 'shown', (await owner.page.textContent('#scene-status')) ?? '');
    const projectId = pagePath.split('/').at(-2)!;
    const nodes = await glbNodeCount(projectId, token);
    assert.equal(nodes, 1790, 'the arena\'s 1,790 parts');
    assert.equal(Number(await owner.page.getAttribute('#scene-view', 'data-nodes')), nodes, 'every node of scene.glb is in the viewer\'s scene');
    await assertCanvasDrawn(owner.page);
    // Without a mouse: the view takes focus, the arrow keys move it and Shift and an arrow turns it.
    const before = await canvasPixels(owner.page);
    await owner.page.focus('#viewer');
    for (let i = 0; i < 8; i++) await owner.page.keyboard.press('Shift+ArrowLeft');
    const turned = await canvasPixels(owner.page);
    for (let i = 0; i < 8; i++) await owner.page.keyboard.press('ArrowUp');
    const moved = await canvasPixels(owner.page);
    assert.notEqual(turned, before, 'Shift and the arrow keys turn the view');
    assert.notEqual(moved, turned, 'the arrow keys move the view');
    await owner.page.locator('#viewer').screenshot({ path: join(SCREENSHOTS, 'viewer-rocket-arena.png') });
    // In words: parts, not glTF nodes; what is in storage; what the failed images leave out.
    const sceneStatus = (await owner.page.textContent('#scene-status')) ?? '';
    assert.match(sceneStatus, /^The 1,790 parts in the Workspace\. The 1 part kept in storage .* is in the project but not drawn/);
    assert.doesNotMatch(sceneStatus, /node|grey box/, 'no glTF words, and no boxes where the map has no meshes');
    const failedImages = (await owner.page.textContent('#project-assets-failed')) ?? '';
    assert.match((await owner.page.textContent('#scene-missing')) ?? '', new RegExp(`^Not drawn as in Roblox:${failedImages} images could not be downloaded .*decals and textures showing them are left out`));
    assert.ok(await owner.page.isVisible('#scene-download'));
    assertStayedOnService(owner);

    const stranger = await open(t, tokenFor({ id: 'someone-else' }), pagePath);
    if (!stranger) return;
    await stranger.page.waitForSelector('body[data-loaded="failed"]');
    assert.equal(await stranger.page.isVisible('#project'), false);
    assert.match((await stranger.page.textContent('#error .failure-message')) ?? '', /no such project for you/);
    assert.match((await stranger.page.textContent('#error .failure-action')) ?? '', /shown only to the user who created it/);
    await shot(stranger.page, '5-project-not-yours');
  });

  test('a place without scripts: no mode choice, created with the default', async (t) => {
    const session = await open(t, tokenFor({ id: '702' }));
    if (!session) return;
    const { page } = session;
    await analyse(page, NO_SCRIPTS);
    assert.equal(await page.isVisible('#error'), false, (await page.textContent('#error')) ?? '');
    assert.equal(await page.textContent('#count-scripts'), '0');
    assert.equal(await page.isVisible('#script-mode'), false, 'scripts_total = 0: no choice');
    assert.ok(await page.isVisible('#no-scripts'));
    await Promise.all([page.waitForURL('**/api-rbxl/projects/*/page'), page.click('#create')]);
    await page.waitForSelector('body[data-loaded="true"]');
    assert.equal(await page.textContent('#project-title'), 'baseplate-413');
    assert.match((await page.textContent('#scripts-mode')) ?? '', /no scripts/);
    assertStayedOnService(session);
  });

  test('a phone-width window: a long title wraps, the 3D view frames the map and not its baseplate, and a failed view is said in words', async (t) => {
    // 25 red towers on a grey 2,048-stud baseplate, and one part in storage: the view framed
    // the whole baseplate, the towers a dot of a few pixels in its middle.
    const part = (name: string, [x, y, z]: number[], [sx, sy, sz]: number[], rgb: number) => `<Item class="Part" referent="${name}"><Properties>`
      + `<string name="Name">${name}</string><bool name="Anchored">true</bool><Color3uint8 name="Color3uint8">${rgb}</Color3uint8>`
      + `<CoordinateFrame name="CFrame"><X>${x}</X><Y>${y}</Y><Z>${z}</Z><R00>1</R00><R01>0</R01><R02>0</R02><R10>0</R10><R11>1</R11><R12>0</R12><R20>0</R20><R21>0</R21><R22>1</R22></CoordinateFrame>`
      + `<Vector3 name="size"><X>${sx}</X><Y>${sy}</Y><Z>${sz}</Z></Vector3></Properties></Item>`;
    let towers = '';
    for (let i = 0; i < 25; i++) {
      const [a, b] = [Math.floor(i / 5), i % 5];
      towers += part(`Tower${i}`, [a * 12 - 24, 4 + a + b, b * 12 - 24], [6, 8 + 2 * (a + b), 6], 0xffc81e1e);
    }
    const town = join(scratch, 'baseplate-town.rbxlx');
    await writeFile(town, '<roblox version="4"><Item class="Workspace" referent="W"><Properties><string name="Name">Workspace</string></Properties>'
      + `${part('Baseplate', [0, -0.5, 0], [2048, 1, 2048], 0xff635f62)}${towers}`
      // A mesh whose asset the host does not have (odd ids answer 404): a grey box, said below the view.
      + part('Statue', [0, 2, 0], [2, 2, 2], 0xff635f62).replace('class="Part"', 'class="MeshPart"').replace('<Properties>', '<Properties><Content name="MeshId"><url>rbxassetid://7</url></Content>')
      + '</Item>'
      + `<Item class="ReplicatedStorage" referent="S"><Properties><string name="Name">ReplicatedStorage</string></Properties>${part('Template', [0, 0, 0], [2, 2, 2], 0xff635f62)}</Item></roblox>`);

    const phone = { width: 390, height: 844 };
    const session = await open(t, tokenFor({ id: 'phone-user' }), '/api-rbxl/', phone);
    if (!session) return;
    const { page } = session;
    await analyse(page, town);
    assert.equal(await page.isVisible('#error'), false, (await page.textContent('#error')) ?? '');
    const title = `${'W'.repeat(60)} ${'Extraordinarily-long-project-title-'.repeat(4)}`.slice(0, 200);
    await page.fill('#title', title);
    await Promise.all([page.waitForURL('**/api-rbxl/projects/*/page'), page.click('#create')]);
    await page.waitForSelector('#scene-view[data-state="shown"], #scene-view[data-state="failed"]', { timeout: 120_000 });
    assert.equal(await page.getAttribute('#scene-view', 'data-state'), 'shown', (await page.textContent('#scene-status')) ?? '');
    await shot(page, '8-project-phone', true);
    assert.equal(await page.textContent('#project-title'), title);
    const widths = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    assert.ok(widths[0]! <= widths[1]!, `nothing runs off a 390 px window (the page is ${widths[0]} px wide)`);

    // The towers fill the view, as in the analysis's picture, and none is cut off at its edge.
    const red = await page.evaluate(() => {
      const canvas = document.getElementById('viewer') as HTMLCanvasElement;
      const copy = document.createElement('canvas');
      copy.width = canvas.width; copy.height = canvas.height;
      const context = copy.getContext('2d')!;
      context.drawImage(canvas, 0, 0);
      const data = context.getImageData(0, 0, copy.width, copy.height).data;
      let count = 0, edge = 0;
      for (let y = 0; y < copy.height; y++) {
        for (let x = 0; x < copy.width; x++) {
          const i = (y * copy.width + x) * 4;
          if (!(data[i]! > 60 && data[i]! > 2.5 * data[i + 1]! && data[i]! > 2.5 * data[i + 2]!)) continue;
          count++;
          if (x < 2 || y < 2 || x >= copy.width - 2 || y >= copy.height - 2) edge++;
        }
      }
      return { share: count / (copy.width * copy.height), edge };
    });
    await page.locator('#viewer').screenshot({ path: join(SCREENSHOTS, 'viewer-baseplate-town.png') });
    assert.ok(red.share > 0.05, `the towers cover ${(red.share * 100).toFixed(2)}% of the view`);
    assert.equal(red.edge, 0, 'no tower is cut off at the view\'s edge');
    assert.match((await page.textContent('#scene-status')) ?? '', /^The 27 parts in the Workspace\. The 1 part kept in storage/);
    assert.equal(await page.textContent('#scene-missing'), 'Not drawn as in Roblox:1 part stands as a grey box of its size instead of a mesh or union: mesh not downloaded (1).');
    assertStayedOnService(session);

    // A scene.glb the service refuses: a sentence, not the client's raw JSON.
    await page.route('**/scene.glb', (route) => route.fulfill({
      status: 507, contentType: 'application/json', body: JSON.stringify({ error: { code: 'storage_full', message: 'the data directory is full' } }),
    }));
    await page.reload();
    await page.waitForSelector('#scene-view[data-state="failed"]');
    const failed = (await page.textContent('#scene-status')) ?? '';
    assert.match(failed, /^The 3D view could not be shown\. The service has run out of room to store maps\. Try again later/);
    assert.doesNotMatch(failed, /[{}]|507/);
  });

  test('errors are sentences with what to do and the raw answer behind Details; empty and too large files never leave the page', async (t) => {
    const session = await open(t, tokenFor({ id: 703 }));
    if (!session) return;
    const { page } = session;

    await analyse(page, NOT_A_PLACE);
    assert.match((await page.textContent('#error .failure-message')) ?? '', /^This file is not a Roblox map the importer can read/);
    assert.match((await page.textContent('#error .failure-action')) ?? '', /Choose a \.rbxl/);
    assert.equal(await page.isVisible('#error pre'), false, 'the raw answer is folded');
    await page.click('#error summary');
    assert.match((await page.textContent('#error pre')) ?? '', /^analyze failed \(422\): \{.*"error"/);
    assert.equal(await page.isVisible('#report'), false);
    await shot(page, '6-error');

    // A map cut short (a copy or download that stopped) is said as such, not as some other file.
    const truncated = join(scratch, 'cut-short.rbxl');
    await writeFile(truncated, (await readFile(WITH_SCRIPTS)).subarray(0, 12_000));
    await analyse(page, truncated);
    assert.match((await page.textContent('#error .failure-message')) ?? '', /^This map file is cut short/);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'analyze', 'focus is back on the button, for another try');
    assert.match((await page.textContent('#error .failure-action')) ?? '', /not copied or downloaded completely/);
    assert.match((await page.textContent('#error pre')) ?? '', /but the file has \d+ left/, 'the decoder\'s words stay behind Details');

    const analyzeCalls = () => session.requests.filter((request) => request.url().endsWith('/import/rbxl/analyze')).length;
    const before = analyzeCalls();
    const empty = join(scratch, 'empty.rbxl');
    await writeFile(empty, '');
    await page.setInputFiles('#file', empty);
    assert.match((await page.textContent('#error .failure-message')) ?? '', /empty.rbxl is empty \(0 bytes\)/);
    assert.ok(await page.isDisabled('#analyze'));
    const large = join(scratch, 'large.rbxl');
    await writeFile(large, Buffer.alloc(MAX_UPLOAD_BYTES + 1));
    await page.setInputFiles('#file', large);
    // One byte over: both sizes would read 4.0 MB, so they are given in bytes.
    assert.match((await page.textContent('#error .failure-message')) ?? '', /large\.rbxl is 4,194,305 bytes, larger than the 4,194,304 bytes this service accepts/);
    const larger = join(scratch, 'larger.rbxl');
    await writeFile(larger, Buffer.alloc(MAX_UPLOAD_BYTES * 2));
    await page.setInputFiles('#file', larger);
    assert.match((await page.textContent('#error .failure-message')) ?? '', /larger\.rbxl is 8\.0 MB, larger than the 4\.0 MB this service accepts/);
    assert.match((await page.textContent('#file-hint')) ?? '', /up to 4\.0 MB/, 'the page learnt the limit from the service');
    assert.equal(analyzeCalls(), before, 'nothing was uploaded');
    await shot(page, '7-refused-before-upload');

    // Signed out in development: the page asks for a sign-in instead of sending a request that must fail.
    await page.click('#account-change');
    await page.click('#sign-out');
    await page.setInputFiles('#file', WITH_SCRIPTS);
    await page.click('#analyze');
    assert.match((await page.textContent('#error .failure-message')) ?? '', /^Sign in first/);
    assert.ok(await page.isVisible('#dev-sign-in'));
    assert.equal(analyzeCalls(), before);
  });
});
