export const id = <T>(x: T) => x;
