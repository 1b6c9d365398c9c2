/** Durable state of the service: atomic file writes, the preview store, the project store. */
export { directoryMaker, isNotFound, isTempName, moveFileAtomic, syncDirectory, writeFileAtomic } from './atomic.js';
export { createPreviewStore, isPreviewHash } from './previews.js';
export type { NewPreview, Preview, PreviewAnalysis, PreviewAsset, PreviewStore, PreviewStoreOptions, UserPreview } from './previews.js';
export { createProjectStore, isProjectId, newProjectId } from './projects.js';
export type { ProjectStore, ProjectStoreOptions } from './projects.js';
