/**
 * Ids of the words the walk recognises by position (task.wait,
 * coroutine.yield, require(id), ...). words.ts assigns them; the host passes
 * them in once through `configure` (index.ts).
 */
export let wordWait = 0;
export let wordWaitUpper = 0;
export let wordTask = 0;
export let wordCoroutine = 0;
export let wordYield = 0;
export let wordSynchronize = 0;
export let wordDesynchronize = 0;
export let wordRequire = 0;
export let wordLocalPlayer = 0;
export let wordMath = 0;
export let wordHuge = 0;
export let wordInvokeServer = 0;
export let wordInvokeClient = 0;
/** Shortest and longest platform service names, so string literals are looked up only when they could match. */
export let serviceNameMin = 0;
export let serviceNameMax = 0;

/** Word ids in the order of POSITIONAL_WORD_IDS in words.ts (the host writes them at `ids`). */
export function setWordIds(ids: usize): void {
  wordWait = load<i32>(ids, 0);
  wordWaitUpper = load<i32>(ids, 4);
  wordTask = load<i32>(ids, 8);
  wordCoroutine = load<i32>(ids, 12);
  wordYield = load<i32>(ids, 16);
  wordSynchronize = load<i32>(ids, 20);
  wordDesynchronize = load<i32>(ids, 24);
  wordRequire = load<i32>(ids, 28);
  wordLocalPlayer = load<i32>(ids, 32);
  wordMath = load<i32>(ids, 36);
  wordHuge = load<i32>(ids, 40);
  wordInvokeServer = load<i32>(ids, 44);
  wordInvokeClient = load<i32>(ids, 48);
  serviceNameMin = load<i32>(ids, 52);
  serviceNameMax = load<i32>(ids, 56);
}
