//! Bash command analysis: the tree-sitter walk, rule patterns, wrappers and read-only commands.

pub mod commands;
pub mod parse;
pub mod pattern;
