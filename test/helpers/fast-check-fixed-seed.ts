import fc from 'fast-check';

// Mutation runs must be repeatable: the same inputs for every mutant, every run.
fc.configureGlobal({ seed: 20_261_122 });
