// A stylesheet imported by the code is bundled into console.css (scripts/build-console.mjs).
declare module '*.css' {}
