export const countWords = (text) => text.split(/\s+/).filter(Boolean).length;
