import { type RestApp, requireStaff } from '../../http/context';

export function forceError(app: RestApp) {
  app.get(
    '/debug/error',
    {
      config: { staff: true },
      schema: {
        tags: ['debug', 'staff'],
        summary: 'Forces an unexpected error, to test error handling (staff)',
      },
    },
    async (request) => {
      requireStaff(request);
      throw new Error('Forced error from GET /rest/debug/error');
    },
  );
}
