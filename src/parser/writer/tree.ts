/** The instance-tree side of the file: class grouping, service markers and the PRNT order. */
import { findService, type Dom } from '../dom.js';
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
  /** The class's rows, in DOM order. */
  readonly rows: Int32Array;
}

/** Rejects referents the format cannot carry: -1 (the null referent), or one used twice. */
export function checkReferents(dom: Dom): void {
  const seen = new Set<number>();
  for (let row = 0; row < dom.count; row++) {
    const referent = dom.referent(row);
    if (referent === -1) throw new EncodeError(`referent ${referent} is not a valid i32 other than -1`, { className: dom.className(row), referent });
    if (seen.has(referent)) throw new EncodeError(`referent ${referent} is used by two instances`, { className: dom.className(row), referent });
    seen.add(referent);
  }
}

/**
 * Rows grouped by class, classes sorted by name, rows in DOM order. A binary DOM has
 * one table per class; an XML DOM may split a class over several tables.
 */
export function groupByClass(dom: Dom): ClassGroup[] {
  const groups = new Map<string, number[]>();
  for (let row = 0; row < dom.count; row++) {
    const className = dom.className(row);
    let rows = groups.get(className);
    if (!rows) groups.set(className, (rows = []));
    rows.push(row);
  }
  return [...groups.keys()].sort().map((className) => ({ className, rows: Int32Array.from(groups.get(className)!) }));
}

/**
 * Service markers, as Studio writes them: in a place (a DOM with a root Workspace)
 * every root is a service with marker 1 (Studio writes most but not all plain
 * `Instance` roots so); in a model no instance gets marker 1, but a service class
 * still gets object_format 1 (as Studio writes a Lighting saved as a model).
 */
export function serviceMarkers(dom: Dom): (group: ClassGroup) => Uint8Array | null {
  const isPlace = findService(dom, 'Workspace') !== -1;
  return ({ className, rows }) => {
    const markers = new Uint8Array(rows.length);
    if (isPlace) {
      rows.forEach((row, i) => { markers[i] = dom.parent(row) === -1 ? 1 : 0; });
    }
    return SERVICE_CLASSES.has(className) || markers.includes(1) ? markers : null;
  };
}

/**
 * PRNT order: depth-first post-order (children before their parent, siblings in
 * order), as Studio writes it, so a decoder that links in chunk order rebuilds the
 * same child order. The child and sibling links are the walk's only state, so a
 * deep tree needs no stack.
 */
export function parentLinks(dom: Dom): { children: Int32Array; parents: Int32Array } {
  const children = new Int32Array(dom.count);
  const parents = new Int32Array(dom.count);
  let n = 0;
  const deepestFirst = (row: number): number => {
    for (let child = dom.firstChild(row); child !== -1; child = dom.firstChild(row)) row = child;
    return row;
  };
  for (let root = dom.firstRoot; root !== -1; root = dom.nextSibling(root)) {
    for (let at = deepestFirst(root); ; ) {
      const parent = dom.parent(at);
      children[n] = dom.referent(at);
      parents[n] = parent === -1 ? -1 : dom.referent(parent);
      n++;
      if (at === root) break;
      const sibling = dom.nextSibling(at);
      at = sibling !== -1 ? deepestFirst(sibling) : parent;
    }
  }
  return { children, parents };
}
