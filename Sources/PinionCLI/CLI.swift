public enum PinionCLIPlaceholder {}
