// Types of compile.js (plain JavaScript: it runs before anything can load TypeScript).
export declare const ROOT: string;
export declare function sourceFiles(root?: string): string[];
export declare function isFresh(root?: string): boolean;
export declare const ENTRIES: string[];
export declare function compile(root?: string, entries?: string[]): Promise<number>;
export declare function configValidatorCode(root?: string): Promise<string | null>;
