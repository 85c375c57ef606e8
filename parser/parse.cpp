// Placeholder: the parser helper replaces this file.
