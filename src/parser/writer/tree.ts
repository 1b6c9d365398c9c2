/** The instance-tree side of the file: class grouping, service markers and the PRNT order. */
import type { Dom, Instance } from '../dom.js';
import { EncodeError } from './errors.js';

/**
 * Classes Roblox writes as services (INST object_format 1), wherever they sit.
 * Collected from files Studio wrote (../shared/corpus) and rbx-dom's service list.
 */
export const SERVICE_CLASSES: ReadonlySet<string> = new Set([
  'AnalyticsService', 'AssetService', 'AvatarSettings', 'BadgeService', 'CSGDictionaryService',
  'ChangeHistoryService', 'Chat', 'CollectionService', 'ConfigureServerService', 'ContentProvider',
  'ContextActionService', 'CookiesService', 'DataStoreService', 'Debris', 'FWService', 'GamePassService',
  'Geometry', 'GroupService', 'GuiService', 'GuidRegistryService', 'HttpService', 'InsertService',
  'JointsService', 'LanguageService', 'Lighting', 'LocalizationService', 'LodDataService', 'LogService',
  'LuaWebService', 'MarketplaceService', 'MaterialService', 'MessagingService',
  'NonReplicatedCSGDictionaryService', 'PathfindingService', 'PermissionsService', 'PhysicsService',
  'PlayerEmulatorService', 'Players', 'PolicyService', 'ProcessInstancePhysicsService',
  'ProximityPromptService', 'RenderHooksService', 'ReplicatedFirst', 'ReplicatedStorage', 'RunService',
  'ScriptInformationProvider', 'ScriptService', 'Selection', 'ServerScriptService', 'ServerStorage',
  'ServiceVisibilityService', 'SocialService', 'SoundService', 'StarterGui', 'StarterPack', 'StarterPlayer',
  'Stats', 'StudioData', 'Teams', 'TeleportService', 'TestService', 'TextChatService', 'TextService',
  'TimerService', 'TouchInputService', 'TweenService', 'UGCAvatarService', 'UserInputService', 'UserService',
  'VRService', 'VideoCaptureService', 'VideoService', 'VirtualInputManager', 'VoiceChatService', 'Workspace',
]);

export interface ClassGroup {
  readonly className: string;
  readonly members: Instance[];
}

/** Rejects referents the format cannot carry: not an i32, -1 (the null referent), or used twice. */
export function checkReferents(instances: readonly Instance[]): void {
  const seen = new Set<number>();
  for (const { referent, className } of instances) {
    if (!Number.isInteger(referent) || referent < -0x80000000 || referent > 0x7fffffff || referent === -1) {
      throw new EncodeError(`referent ${referent} is not a valid i32 other than -1`, { className, referent });
    }
    if (seen.has(referent)) throw new EncodeError(`referent ${referent} is used by two instances`, { className, referent });
    seen.add(referent);
  }
}

/** Instances grouped by class, classes sorted by name, members in DOM order. */
export function groupByClass(instances: readonly Instance[]): ClassGroup[] {
  const groups = new Map<string, Instance[]>();
  for (const instance of instances) {
    let members = groups.get(instance.className);
    if (!members) groups.set(instance.className, (members = []));
    members.push(instance);
  }
  return [...groups.keys()].sort().map((className) => ({ className, members: groups.get(className)! }));
}

/** The parent the file records: none when the parent is not part of the DOM being written. */
export function parentIn(instance: Instance, members: ReadonlySet<Instance>): Instance | null {
  return instance.parent && members.has(instance.parent) ? instance.parent : null;
}

/**
 * Service markers, as Studio writes them: in a place (a DOM with a root Workspace)
 * every root is a service with marker 1 (Studio writes most but not all plain
 * `Instance` roots so); in a model no instance gets marker 1, but a service class
 * still gets object_format 1 (as Studio writes a Lighting saved as a model).
 */
export function serviceMarkers(dom: Dom, members: ReadonlySet<Instance>): (group: ClassGroup) => Uint8Array | null {
  const isPlace = dom.instances.some((i) => i.className === 'Workspace' && parentIn(i, members) === null);
  return ({ className, members: instances }) => {
    const markers = new Uint8Array(instances.length);
    if (isPlace) {
      instances.forEach((instance, i) => { markers[i] = parentIn(instance, members) === null ? 1 : 0; });
    }
    return SERVICE_CLASSES.has(className) || markers.includes(1) ? markers : null;
  };
}

/**
 * PRNT order: depth-first post-order (children before their parent, siblings in
 * order), as Studio writes it, so a decoder that links in chunk order rebuilds the
 * same child order. Iterative: a deep tree must not exhaust the stack. Instances no
 * parent lists among its children come last, still with their parent.
 */
export function parentLinks(dom: Dom, members: ReadonlySet<Instance>): { children: Int32Array; parents: Int32Array } {
  const count = dom.instances.length;
  const children = new Int32Array(count);
  const parents = new Int32Array(count);
  const done = new Set<Instance>();
  let n = 0;
  const emit = (instance: Instance) => {
    done.add(instance);
    children[n] = instance.referent;
    parents[n] = parentIn(instance, members)?.referent ?? -1;
    n++;
  };

  const roots = new Set<Instance>();
  for (const list of [dom.roots, dom.instances]) {
    for (const root of list) if (members.has(root) && parentIn(root, members) === null) roots.add(root);
  }
  // Children are followed only from their own parent, so the walk cannot loop.
  for (const root of roots) {
    if (done.has(root)) continue;
    const stack: Instance[] = [root];
    const next: number[] = [0];
    while (stack.length) {
      const top = stack.length - 1;
      const at = stack[top]!;
      const i = next[top]!;
      if (i < at.children.length) {
        next[top] = i + 1;
        const child = at.children[i]!;
        if (child.parent === at && members.has(child) && !done.has(child)) {
          stack.push(child);
          next.push(0);
        }
      } else {
        stack.pop();
        next.pop();
        emit(at);
      }
    }
  }
  for (const instance of dom.instances) if (!done.has(instance)) emit(instance);
  return { children, parents };
}
