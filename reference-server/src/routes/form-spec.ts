import type { z } from 'zod';

/**
 * A portal form (`application/x-www-form-urlencoded`): the schema that documents it and that the handler's
 * `body` is parsed with, once, before the handler runs (as hono's `openapi()` validates a form from the route
 * that documents it). A form that fails it answers the 400 page, unless `invalid` answers it instead (hono's
 * route `hook`): sign-in counts a malformed attempt as a failed sign-in; a form on another business's resource
 * is refused for that first.
 *
 * @example
 * form: { schema: SignInFormSchema, invalid: refuse, invalidStatuses: [401, 429] }
 */
export interface FormSpec<F extends z.ZodType = z.ZodType, C = never, D = never> {
  schema: F;
  invalid?: (error: z.ZodError, context: C, deps: D) => Promise<void>;
  /**
   * What `invalid` answers in place of the 400, for a hook that never ends in it (sign-in: 401, or 429 once
   * the address failed too often): the document lists these instead of the 400. Without it an invalid form is
   * documented as 400, which the other hooks answer after their own checks.
   */
  invalidStatuses?: readonly number[];
}
