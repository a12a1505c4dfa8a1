// What Vite makes of an import with a query (web/vite.config.ts): a file's URL, a worker's constructor.
declare module '*?url' {
  const url: string;
  export default url;
}
declare module '*?worker' {
  const WorkerConstructor: new () => Worker;
  export default WorkerConstructor;
}
