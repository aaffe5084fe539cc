// The few parts of node this kit uses, declared here so that `tsc` needs no @types/node
// package (nothing to download: Debian's node-typescript is enough).
declare const process: {
  env: Record<string, string | undefined>;
  stdin: unknown;
  stdout: { write(text: string): boolean };
  stderr: { write(text: string): boolean };
  exit(status?: number): never;
};
declare function require(name: "readline"): {
  createInterface(options: { input: unknown; crlfDelay?: number }): {
    on(event: "line", listener: (line: string) => void): void;
    on(event: "close", listener: () => void): void;
  };
};
declare const module: { exports: unknown };
declare const exports: Record<string, unknown>;
