// Builds the owners' rules at the edge (owner-rules.ts): the files group sets an owner's allow-list, the
// bandwidth check stops and resumes an owner, the takedowns worker copies them to the edge.
import { type OwnerRulesDeps, OwnerRulesDesk } from './owner-rules.ts';

export function buildOwnerRules(input: OwnerRulesDeps): OwnerRulesDesk {
  return new OwnerRulesDesk(input);
}
