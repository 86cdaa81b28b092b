import { Component, type ReactNode } from 'react';
import { SomethingWentWrong } from './something-went-wrong';

type Props = { supportEmail: string; children: ReactNode };

/** Catches a page that fails to render and shows the Something went wrong screen. */
export class PageErrorBoundary extends Component<Props, { failed: boolean }> {
  override state = { failed: false };

  static getDerivedStateFromError() {
    return { failed: true };
  }

  override componentDidCatch(error: unknown) {
    console.error('Page render failed', error);
  }

  override render() {
    if (this.state.failed) {
      return (
        <SomethingWentWrong
          supportEmail={this.props.supportEmail}
          onRetry={() => this.setState({ failed: false })}
        />
      );
    }
    return this.props.children;
  }
}
