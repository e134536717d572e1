// Placeholder entry point; replaced by the service wiring.
export {};
