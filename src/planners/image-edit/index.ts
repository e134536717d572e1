export * from './edit-images.js';
