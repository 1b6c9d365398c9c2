/** The script decision and the failure sentences the pages and the CLI share (src/client/decision.ts, explain.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideScripts, describeAssetReason, describeFailure, ASSET_REASONS } from '../src/client/index.js';
import { ClientError } from '../src/client/errors.js';

const counts = (scripts: number, enabled: number, mostSevere = scripts, mostSevereEnabled = enabled) =>
  ({ scripts, enabled, most_severe: mostSevere, most_severe_enabled: mostSevereEnabled });
const none = counts(0, 0);

function report(byFinding: Record<string, ReturnType<typeof counts>>, extra: Record<string, unknown> = {}) {
  return {
    scripts_total: 100, scripts_disabled: 10, scripts_linked: 2, scripts_flagged: 40,
    scripts_by_run_context: { Legacy: 90, Server: 5, Client: 5 },
    scripts_by_finding: {
      loop_without_yield: none, external_code: none, dynamic_code: none, local_player_on_server: none,
      platform_service: none, deprecated_global: none, legacy_method: none, ...byFinding,
    },
    script_findings: {},
    scripts_at_risk: [],
    ...extra,
  };
}

test('a hang risk the map runs: disabled is recommended, with the count in the reason', () => {
  const decision = decideScripts(report({ loop_without_yield: counts(4, 3), deprecated_global: counts(30, 28, 26, 25) }));
  assert.equal(decision.recommended, 'disabled');
  assert.match(decision.reason, /^3 scripts the map runs have loops that never pause/);
  assert.deepEqual(decision.groups.hang, { scripts: 4, enabled: 3 });
  assert.deepEqual(decision.groups.style, { scripts: 26, enabled: 25 }, 'old style only: scripts with nothing worse');
});

test('hang risks all switched off in the map: enabled keeps them off, so it is recommended', () => {
  const decision = decideScripts(report({ loop_without_yield: counts(4, 0), platform_service: counts(6, 6) }));
  assert.equal(decision.recommended, 'enabled');
  assert.match(decision.reason, /already switched off in the map, and Enabled keeps them off/);
  assert.match(decision.reason, /6 scripts may stop with an error/);
});

test('only old style: enabled, and the headline does not call legacy style a risk', () => {
  const decision = decideScripts(report({ legacy_method: counts(40, 40), deprecated_global: counts(20, 20, 0, 0) }));
  assert.equal(decision.recommended, 'enabled');
  assert.match(decision.reason, /^No script has a loop that can freeze the game/);
  assert.deepEqual(decision.groups.hang, { scripts: 0, enabled: 0 });
  assert.deepEqual(decision.groups.break, { scripts: 0, enabled: 0 });
  assert.deepEqual(decision.codes.map((code) => [code.code, code.scripts]), [['deprecated_global', 20], ['legacy_method', 40]]);
});

test('no scripts: no recommendation (the choice is not offered)', () => {
  const decision = decideScripts({ scripts_total: 0 });
  assert.equal(decision.recommended, null);
  assert.deepEqual(decision.atRisk, []);
});

test('the list groups scripts by finding, a script under each code it has, copies counted once', () => {
  const decision = decideScripts(report({}, {
    scripts_flagged: 12,
    scripts_at_risk: [
      { path: 'W.Spin', class: 'Script', copies: 10, disabled: 2, copy_paths: ['W.Spin2'], findings: [{ code: 'loop_without_yield', line: 3, message: 'm' }, { code: 'deprecated_global', line: 5, message: 'w' }] },
      { path: 'W.Old', class: 'Script', copies: 2, disabled: 0, copy_paths: [], findings: [{ code: 'deprecated_global', line: 1, message: 'w' }] },
    ],
  }));
  assert.ok(decision.complete);
  assert.deepEqual(decision.atRisk.map((group) => [group.code, group.entries.map((entry) => `${entry.path}×${entry.copies}`)]), [
    ['loop_without_yield', ['W.Spin×10']],
    ['deprecated_global', ['W.Spin×10', 'W.Old×2']],
  ]);
});

test('failures as sentences: what happened, what to do, and the raw answer kept', () => {
  const body = JSON.stringify({ error: { code: 'quota_exceeded', message: 'you have 100 previews (USER_MAX_PREVIEWS)' } });
  const quota = describeFailure(new ClientError(`analyze failed (507): ${body}`, 507, body), 'analyze');
  assert.equal(quota.message, 'You have used up your share of the service (you have 100 previews (USER_MAX_PREVIEWS)).');
  assert.match(quota.action, /Delete projects you no longer need/);
  assert.equal(quota.details, `analyze failed (507): ${body}`);
  assert.equal(quota.code, 'quota_exceeded');

  const gone = describeFailure(new ClientError('create failed (404): {"error":{"code":"not_found","message":"preview not found"}}', 404, '{"error":{"code":"not_found","message":"preview not found"}}'), 'create');
  assert.match(gone.message, /analysis of this map is no longer on the service/);
  assert.match(gone.action, /Upload the map again/);

  const offline = describeFailure(new ClientError('analyze failed: fetch failed (connect ECONNREFUSED)', 0, ''), 'analyze');
  assert.equal(offline.message, 'The service could not be reached.');
  const proxy = describeFailure(new ClientError('analyze failed (502): <html>', 502, '<html>'), 'analyze');
  assert.match(proxy.message, /answered with an error \(502\)/);
  assert.equal(describeFailure(new Error('boom')).message, 'boom');
  // The store down (503 store_unavailable, src/http/errors.ts) passes: it was said as a refusal, 'tell the operator'.
  const storeBody = JSON.stringify({ error: { code: 'store_unavailable', message: 'the storage is unavailable; retry shortly' } });
  const store = describeFailure(new ClientError(`create failed (503): ${storeBody}`, 503, storeBody), 'create');
  assert.equal(store.message, 'The service cannot reach its storage right now.');
  assert.match(store.action, /^Try again in a few seconds/);
});

test('every asset failure reason has a label and what to do; an unknown one still reads', () => {
  for (const reason of ['no_credentials', 'unauthorized', 'forbidden', 'not_found', 'rate_limited', 'timeout', 'too_large', 'upstream_error', 'network_error']) {
    assert.ok(ASSET_REASONS[reason], reason);
    assert.ok(describeAssetReason(reason).action.length > 20, reason);
  }
  assert.match(describeAssetReason('no_credentials').action, /ASSET_API_KEY/);
  assert.match(describeAssetReason('something_new').label, /something_new/);
});
